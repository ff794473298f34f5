/**
 * The fraud guard's counters and account settings.
 */

export type FraudMode = 'enforce' | 'monitor' | 'off'
/** The rules' names in logs, metrics and `send.blocked` events. */
export type FraudRule = 'geo' | 'ip' | 'new_country' | 'conversion' | 'daily_credit'
export type ScopeKind = 'prefix' | 'country'

/** An account's own settings; null means the config's. */
export interface AccountFraudSettings {
  allowedCountries: string[] | null
  dailyCreditLimit: number | null
  testRecipients: boolean
}

export interface BlockRow {
  accountId: number
  kind: ScopeKind
  /** The country, or the prefix in clear (a range under attack, shown to operators). */
  scope: string
  startedAt: number | null
  /** The end of the current or last block; null when none was ever set or it was lifted. */
  until: number | null
  /** 0 for a 15 min block, then x4 per level. */
  level: number
  /** Rule 4 counts this scope's sends from this time on (set by an unblock). */
  countsFrom: number
}

export interface FraudSendRow {
  seq: number
  accountId: number
  at: number
  country: string
  /** The prefix's counting key (otp/fraud.ts prefixKey): its HMAC, never the prefix; the country for a short number. */
  prefix: string
  ipHash: Uint8Array | null
  counted: boolean
}

export interface CountryStats {
  accountId: number
  country: string
  sends: number
  approved: number
}

/**
 * A send's reads of rules 2 to 4 when rules 3 and 4 read without a lock
 * (otp/fraud.ts): each answers what the FraudStore method of the same name
 * would.
 */
export interface GuardReadsQuery {
  accountId: number
  country: string
  /** Rule 2: the IP's counted sends since `since`, under the IP's lock; null when the caller passed no IP. */
  ip: { hash: Uint8Array; since: number } | null
  /** Rule 3: the country's counted sends since `countrySince`, read only when its last approval is none or not after `provenAfter`. */
  countrySince: number
  provenAfter: number
  /** Rule 4: the country's scope, then the prefix's if it has one: each one's block, and its conversion over `window` (null: not read). */
  scopes: { kind: ScopeKind; scope: string; counted: string; window: { from: number; to: number } | null }[]
}

export interface GuardReads {
  ipTimes: number[] | null
  lastApproval: number | null
  /** Null when the country is proven (its hour of sends is not read). */
  countryTimes: number[] | null
  /** In the order of the query's scopes. */
  scopes: { block: BlockRow | undefined; conversion: { sends: number; approved: number } | null }[]
}

/** The fraud guard's counters and account settings (engines implement it). */
export interface FraudStore {
  accountSettings(accountId: number): Promise<AccountFraudSettings>
  setAccountSettings(accountId: number, change: Partial<AccountFraudSettings>): Promise<void>
  /**
   * Takes the lock of rule 3's subject (the account's country) until the
   * transaction ends. True when reads of that subject made before it may be
   * stale and are to be made again (PostgreSQL: an advisory lock, taken now);
   * false when they stand (SQLite, whose single writer holds every subject;
   * or the lock was already held). Reads of rules 3 and 4 take no lock of
   * their own: otp/fraud.ts takes it for a decision that depends on sends in
   * flight (docs/multi-node.md#the-fraud-guard).
   */
  lockCountry(accountId: number, country: string): Promise<boolean>
  /** The same for a rule 4 scope (a block is started or ended only under it). */
  lockScope(accountId: number, kind: ScopeKind, scope: string): Promise<boolean>
  /** Times (ascending) of counted sends from an end-user IP (the hash is keyed by account) since `since`. */
  ipSendTimes(ipHash: Uint8Array, since: number): Promise<number[]>
  /** Times (ascending) of the account's counted sends to a country since `since`. */
  countrySendTimes(accountId: number, country: string, since: number): Promise<number[]>
  /** When the account last had a verification to this country approved, or null. */
  lastApproval(accountId: number, country: string): Promise<number | null>
  /** Counted sends of a scope (a country, or a prefix's counting key) with `from <= at <= to`, and how many of them were approved. */
  conversion(accountId: number, kind: ScopeKind, scope: string, from: number, to: number): Promise<{ sends: number; approved: number }>
  block(accountId: number, kind: ScopeKind, scope: string): Promise<BlockRow | undefined>
  /** Rules 2 to 4's reads at once (PostgreSQL: one statement, behind the IP's lock). */
  guardReads(q: GuardReadsQuery): Promise<GuardReads>
  saveBlock(block: BlockRow): Promise<void>
  recordSend(send: FraudSendRow): Promise<void>
  /** A send no provider took (refunded, out of use): it was never delivered, so it counts toward no rule. */
  dropSend(seq: number): Promise<void>
  /** The verification `seq` was approved: its send converts, and its country is proven (if it counted). */
  approved(seq: number, at: number): Promise<void>
  /** Time of the account's n-th most recent send debit not refunded (every channel) after `since`, if it has that many. */
  nthLatestDebit(accountId: number, since: number, n: number): Promise<number | undefined>
  /** Blocks with `until > now`, of one account or all. */
  activeBlocks(accountId: number | undefined, now: number): Promise<BlockRow[]>
  /** Sends and approvals by account and country since `since` (every recorded send, counted or not). */
  countryStats(accountId: number | undefined, since: number): Promise<CountryStats[]>
}
