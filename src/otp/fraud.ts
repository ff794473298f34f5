/**
 * Fraud guard against SMS pumping (docs/api.md#fraud-guard): five rules decided
 * inside the send's write transaction from counters in the database, so exact
 * across processes and restarts: 1 geo permissions, 2 per end-user IP, 3
 * unproven destinations, 4 conversion (escalating blocks per prefix and
 * country), 5 the daily credit cap. `monitor` records what rules 1-4 would
 * refuse without refusing, and a send let through that way counts toward no
 * rule, so it decides as enforce would; rule 5 refuses in every mode.
 */
import { destinationOf } from '../lib/phone-country.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { AccountFraudSettings, BlockRow, FraudMode, FraudRule, Repos, ScopeKind } from './ports/index.ts'
import type { Channel } from './types.ts'
import { secondsUntil, waitForRoom } from './windows.ts'

export interface FraudSettings {
  mode: FraudMode
  /** `*` allows every country. */
  allowedCountries: string[]
  ipPerHour: number
  newCountryPerHour: number
  conversionGraceSeconds: number
  minSends: number
  minConversion: number
}

export const DEFAULT_FRAUD_SETTINGS: FraudSettings = {
  mode: 'enforce',
  allowedCountries: ['*'],
  ipPerHour: 10,
  newCountryPerHour: 10,
  conversionGraceSeconds: 600,
  minSends: 20,
  minConversion: 0.2,
}

export interface Refusal {
  rule: FraudRule
  /** Null for email (rule 5 only). */
  country: string | null
  /** In clear, for this request only: logs and events show it masked (lib/phone-country.ts maskPrefix). */
  prefix: string | null
  /** The limit named in the message (rules 2 and 5). */
  max: number | null
  /** Seconds, for every 429 (null for rule 1's 403). */
  retryAfter: number | null
}

export interface FraudVerdict {
  /** The send is refused (rules 1-4 in enforce mode, rule 5 in every mode). */
  refusal: Refusal | null
  /** Monitor mode: what rules 1-4 would have refused. */
  monitored: Refusal | null
  /** The destination's country (sms and voice; null for email): the verification's row keeps it for the console. */
  country: string | null
  /**
   * What to record once the send is accepted (sms and voice only, not in
   * `off` mode); `prefix` is the prefix's counting key (prefixKey).
   */
  record: { country: string; prefix: string; counted: boolean } | null
}

export const HASH_PURPOSE_PREFIX = 'fraud-prefix'
/** Bytes of the prefix's HMAC kept as its counting key: 128 bits, as a recipient's. */
const PREFIX_KEY_BYTES = 16
/** Prefix keys kept in memory (prefixKey); the whole set is dropped when full. */
const PREFIX_KEYS_CACHED = 4096

export interface SendFacts {
  accountId: number
  channel: Channel
  /** E.164 for sms and voice. */
  recipient: string
  /** HMAC of the account and canonical end-user IP, when the caller passed `ip`. */
  ipHash: Uint8Array | null
  now: number
  /** The account's settings when the caller read them in this transaction (SendProfile.fraud); else `check` reads them. */
  account?: AccountFraudSettings
  /**
   * A hook's delivery, whose code its identity server checks: otpd never
   * learns of an approval, so the rules that read approvals (3 and 4) and the
   * IP rule (no end-user address) leave it out, and it is not recorded for
   * them (docs/integrations.md#the-fraud-guard).
   */
  checkedElsewhere?: boolean
}

const HOUR = 3_600_000
const DAY = 86_400_000
const PROVEN_MS = 30 * DAY
const FIRST_BLOCK_MS = 15 * 60_000
const MAX_BLOCK_MS = 12 * HOUR
const ESCALATION = 4
/**
 * The shortest grace period under which rule 4 reads without its scope's
 * lock: a send counted in a window that ends this long ago started at least
 * this long ago, and a send's transaction is over within seconds (each
 * statement waits at most database.busy_timeout_ms for a lock).
 */
const LOCK_FREE_GRACE_MS = 60_000

/**
 * What an end user's address counts as for rule 2 (docs/api.md#fraud-guard),
 * from its canonical text (http/validate.ts canonicalIp: IPv4 dotted decimal,
 * an IPv4-mapped address already as its IPv4 address, any other IPv6 address
 * in hex groups): an IPv4 address as itself, an IPv6 address as its /64
 * network. An ISP hands one subscriber a whole /64 (or more), and the host
 * bits are the subscriber's to change at will: counted one by one, each
 * address would be a fresh hour of sends for the same end user.
 */
export function ipScope(canonical: string): string {
  if (!canonical.includes(':')) return canonical
  const [head = '', tail] = canonical.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  // The network's four groups, each without leading zeros: one text per /64.
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`
}

/** How long the block at `level` lasts: 15 min x4 per level, at most 12 h. */
export function blockDuration(level: number): number {
  return Math.min(FIRST_BLOCK_MS * ESCALATION ** Math.min(level, 10), MAX_BLOCK_MS)
}

export class FraudGuard {
  /** `account:prefix` -> its key: the same HMAC every time, so computed once per busy range. */
  private readonly prefixKeys = new Map<string, string>()
  /**
   * Scopes this process found blocked, and until when: their sends read the
   * block alone, not the conversion with it (dayWindow). A hint only: the
   * block's row decides, and a block lifted early costs one read more.
   */
  private readonly blockedUntil = new Map<string, number>()

  constructor(
    /** Replaced by a config reload (app/reload.ts). */
    public settings: FraudSettings,
    private readonly hasher: Hasher,
  ) {}

  /**
   * What a send's prefix is counted under (fraud_sends, fraud_minutes): its
   * HMAC keyed by the server secret (base64url, so never a `+` and a digit
   * run), or the country for a number whose prefix is its country. Stored in
   * clear beside the verification's row number, the prefix and the mask
   * together would give all of the number but one digit (docs/api.md#fraud-guard:
   * what otpd keeps about a send shows no more digits than its mask). Only a
   * block names its prefix in clear: it names a range under attack, for the
   * operator (`fraud status`, `fraud unblock`).
   */
  prefixKey(accountId: number, dest: { country: string; prefix: string }): string {
    if (dest.prefix === dest.country) return dest.country
    const clear = `${accountId}:${dest.prefix}`
    let key = this.prefixKeys.get(clear)
    if (key === undefined) {
      key = this.hasher.digest(HASH_PURPOSE_PREFIX, clear).subarray(0, PREFIX_KEY_BYTES).toString('base64url')
      // A prefix covers 10,000 numbers, so a busy range is keyed once, not on every send; in memory only.
      if (this.prefixKeys.size >= PREFIX_KEYS_CACHED) this.prefixKeys.clear()
      this.prefixKeys.set(clear, key)
    }
    return key
  }

  /** Inside the send's write transaction, after validation and the test-recipient short-circuit. */
  async check(r: Repos, f: SendFacts): Promise<FraudVerdict> {
    const s = this.settings
    const account = f.account ?? (await r.fraud.accountSettings(f.accountId))
    const phone = f.channel !== 'email'
    const dest = phone ? destinationOf(f.recipient) : null
    let would: Refusal | null = null
    if (dest && s.mode !== 'off') would = f.checkedElsewhere ? this.geoRule(dest, account) : await this.rules1to4(r, f, dest, account)
    const country = dest?.country ?? null
    if (would && s.mode === 'enforce') return { refusal: would, monitored: null, country, record: null }
    const monitored = would
    // `off` records nothing: a guard switched off costs a send nothing (docs/fraud-guard.md#rollout).
    const recorded = dest && s.mode !== 'off' && !f.checkedElsewhere
    const record = recorded ? { country: dest.country, prefix: this.prefixKey(f.accountId, dest), counted: monitored === null } : null

    // Rule 5, in every mode.
    const cap = account.dailyCreditLimit
    if (cap !== null) {
      // The window is full while the cap-th most recent debit is in it.
      const nth = await r.fraud.nthLatestDebit(f.accountId, f.now - DAY, cap)
      const wait = nth === undefined ? 0 : nth + DAY - f.now
      if (wait > 0) {
        const refusal = {
          rule: 'daily_credit' as const,
          country: dest?.country ?? null,
          prefix: dest?.prefix ?? null,
          max: cap,
          retryAfter: secondsUntil(wait),
        }
        return { refusal, monitored, country, record: null }
      }
    }
    return { refusal: null, monitored, country, record }
  }

  /** Records an accepted send (same transaction as its verification). */
  async recordSend(r: Repos, verdict: FraudVerdict, seq: number, f: SendFacts): Promise<void> {
    if (!verdict.record) return
    await r.fraud.recordSend({ seq, accountId: f.accountId, at: f.now, ...verdict.record, ipHash: f.ipHash })
  }

  /** Rule 1 alone (a hook's delivery). */
  private geoRule(dest: { country: string; prefix: string }, account: AccountFraudSettings): Refusal | null {
    const allowed = account.allowedCountries ?? this.settings.allowedCountries
    if (allowed.includes('*') || allowed.includes(dest.country)) return null
    return { rule: 'geo', country: dest.country, prefix: dest.prefix, max: null, retryAfter: null }
  }

  private async rules1to4(r: Repos, f: SendFacts, dest: { country: string; prefix: string }, account: AccountFraudSettings): Promise<Refusal | null> {
    const s = this.settings
    const { country, prefix } = dest
    const refuse = (rule: FraudRule, max: number | null, retryAfter: number | null): Refusal => ({ rule, country, prefix, max, retryAfter })

    // 1. Geo permissions.
    const allowed = account.allowedCountries ?? s.allowedCountries
    if (!allowed.includes('*') && !allowed.includes(country)) return refuse('geo', null, null)

    // A grace period of at least LOCK_FREE_GRACE_MS: rules 3 and 4 read
    // without a lock, so the reads of rules 2 to 4 are made at once (on
    // PostgreSQL one statement, the IP's lock ahead of it; rule 3's hour of
    // sends only when the country is unproven), and the rules then decide in
    // order on what was read, as below.
    const prefixScope = prefix !== country ? { scope: prefix, counted: this.prefixKey(f.accountId, dest) } : null
    if (s.conversionGraceSeconds * 1000 >= LOCK_FREE_GRACE_MS) {
      const scopes: { kind: ScopeKind; scope: string; counted: string }[] = [{ kind: 'country', scope: country, counted: country }]
      if (prefixScope) scopes.push({ kind: 'prefix', ...prefixScope })
      const read = await r.fraud.guardReads({
        accountId: f.accountId,
        country,
        ip: f.ipHash ? { hash: f.ipHash, since: f.now - HOUR } : null,
        countrySince: f.now - HOUR,
        provenAfter: f.now - PROVEN_MS,
        scopes: scopes.map((sc) => ({ ...sc, window: this.dayWindow(f, sc.kind, sc.scope) })),
      })
      if (read.ipTimes) {
        const wait = waitForRoom(read.ipTimes, HOUR, s.ipPerHour, f.now)
        if (wait > 0) return refuse('ip', s.ipPerHour, secondsUntil(wait))
      }
      // No hour of sends read: the country is proven (provenAfter).
      const times = read.countryTimes
      const unproven = await this.unprovenWait(r, f, country, {
        applies: times !== null,
        wait: times === null ? 0 : waitForRoom(times, HOUR, s.newCountryPerHour, f.now),
      })
      let blocked = 0
      for (const [i, sc] of scopes.entries()) {
        const { block, conversion } = read.scopes[i]!
        const seen = await this.scopeDecide(r, f, sc.kind, sc.scope, sc.counted, block, conversion)
        blocked = Math.max(blocked, await this.scopeWait(r, f, sc.kind, sc.scope, sc.counted, seen))
      }
      return this.rules3and4(refuse, unproven, blocked)
    }

    // 2. Per end-user IP.
    if (f.ipHash) {
      const wait = waitForRoom(await r.fraud.ipSendTimes(f.ipHash, f.now - HOUR), HOUR, s.ipPerHour, f.now)
      if (wait > 0) return refuse('ip', s.ipPerHour, secondsUntil(wait))
    }

    // 3. Unproven destinations: decided now, reported after rule 4 has looked at the evidence.
    const unproven = await this.unprovenWait(r, f, country)

    // 4. Conversion, both scopes on every send that gets here, so a block starts as soon as the evidence exists.
    let blocked = await this.scopeWait(r, f, 'country', country, country)
    // A number of fewer than 8 digits has its country as prefix: one scope.
    if (prefixScope) blocked = Math.max(blocked, await this.scopeWait(r, f, 'prefix', prefixScope.scope, prefixScope.counted))
    return this.rules3and4(refuse, unproven, blocked)
  }

  /** Rule 3 refuses first; the wait reported is the longer, since a retry before it would meet rule 4. */
  private rules3and4(refuse: (rule: FraudRule, max: number | null, retryAfter: number | null) => Refusal, unproven: number, blocked: number): Refusal | null {
    if (unproven > 0) return refuse('new_country', null, secondsUntil(Math.max(unproven, blocked)))
    if (blocked > 0) return refuse('conversion', null, secondsUntil(blocked))
    return null
  }

  /**
   * Rule 3's reads: the country's last approval, then, only when it is not
   * proven, its counted sends of the last hour (a proven country's hour may
   * hold every send made to it, never read for nothing).
   */
  private async unprovenRead(r: Repos, f: SendFacts, country: string): Promise<{ applies: boolean; wait: number }> {
    const approvedAt = await r.fraud.lastApproval(f.accountId, country)
    if (approvedAt !== null && approvedAt > f.now - PROVEN_MS) return { applies: false, wait: 0 }
    const times = await r.fraud.countrySendTimes(f.accountId, country, f.now - HOUR)
    return { applies: true, wait: waitForRoom(times, HOUR, this.settings.newCountryPerHour, f.now) }
  }

  /**
   * Rule 3's wait: 0 when the country is proven or has room. The reads take
   * no lock: a proven country and a full hour stand whatever sends are in
   * flight (those can only add sends and approvals), so only a send let
   * through, which counts, is decided again under the country's lock on
   * what it reads then (store ports: lockCountry; docs/multi-node.md#the-fraud-guard).
   * `seen`: the reads, when the caller made them.
   */
  private async unprovenWait(r: Repos, f: SendFacts, country: string, seen?: { applies: boolean; wait: number }): Promise<number> {
    seen ??= await this.unprovenRead(r, f, country)
    if (!seen.applies || seen.wait > 0) return seen.wait
    return (await r.fraud.lockCountry(f.accountId, country)) ? (await this.unprovenRead(r, f, country)).wait : 0
  }

  /**
   * Milliseconds the scope stays blocked (0 if not), starting a block when the
   * evidence calls for one; `seen` holds the caller's lock-free reads. With a
   * grace period of at least LOCK_FREE_GRACE_MS no counted send is in flight,
   * so only a new block is decided again under the scope's lock (never started
   * twice); with a shorter one the lock comes first
   * (docs/multi-node.md#the-fraud-guard).
   */
  private async scopeWait(
    r: Repos,
    f: SendFacts,
    kind: ScopeKind,
    scope: string,
    counted: string,
    seen?: { wait: number; start: BlockRow | null },
  ): Promise<number> {
    if (seen === undefined) {
      if (this.settings.conversionGraceSeconds * 1000 < LOCK_FREE_GRACE_MS) await r.fraud.lockScope(f.accountId, kind, scope)
      seen = await this.scopeState(r, f, kind, scope, counted)
    }
    if (seen.start === null) return seen.wait
    const decided = (await r.fraud.lockScope(f.accountId, kind, scope)) ? await this.scopeState(r, f, kind, scope, counted) : seen
    if (decided.start !== null) await r.fraud.saveBlock(decided.start)
    return decided.wait
  }

  /**
   * The window of a scope's conversion read with its block: the sends of the
   * last 24 h older than the grace period; null when there is none, or when
   * this process saw the scope blocked until later (the block alone is read).
   */
  private dayWindow(f: SendFacts, kind: ScopeKind, scope: string): { from: number; to: number } | null {
    const from = f.now - DAY + 1
    const to = f.now - this.settings.conversionGraceSeconds * 1000
    const blockedFor = (this.blockedUntil.get(`${f.accountId}:${kind}:${scope}`) ?? 0) > f.now
    return to < from || blockedFor ? null : { from, to }
  }

  /** The scope's wait as read, and the block to start (null: none): its block and, read with it, its conversion over dayWindow. */
  private async scopeState(r: Repos, f: SendFacts, kind: ScopeKind, scope: string, counted: string): Promise<{ wait: number; start: BlockRow | null }> {
    const window = this.dayWindow(f, kind, scope)
    const [b, day] = await Promise.all([
      r.fraud.block(f.accountId, kind, scope),
      window && r.fraud.conversion(f.accountId, kind, counted, window.from, window.to),
    ])
    return this.scopeDecide(r, f, kind, scope, counted, b, day)
  }

  /**
   * What the block `b` and the conversion `day` (over dayWindow, null when
   * not read) decide. The conversion is read again only when the block's
   * `countsFrom` (an unblock) shortens the window, and not used when the
   * block is in force.
   */
  private async scopeDecide(
    r: Repos,
    f: SendFacts,
    kind: ScopeKind,
    scope: string,
    counted: string,
    b: BlockRow | undefined,
    day: { sends: number; approved: number } | null,
  ): Promise<{ wait: number; start: BlockRow | null }> {
    const s = this.settings
    const none = { wait: 0, start: null }
    const dayFrom = f.now - DAY + 1
    const to = f.now - s.conversionGraceSeconds * 1000
    if (b?.until != null && f.now < b.until) {
      if (this.blockedUntil.size >= PREFIX_KEYS_CACHED) this.blockedUntil.clear()
      this.blockedUntil.set(`${f.accountId}:${kind}:${scope}`, b.until)
      return { wait: b.until - f.now, start: null }
    }
    const from = Math.max(dayFrom, b?.countsFrom ?? 0)
    if (to < from) return none
    const { sends, approved } = from === dayFrom && day ? day : await r.fraud.conversion(f.accountId, kind, counted, from, to)
    if (sends < s.minSends || approved / sends >= s.minConversion) return none
    // A new block within 24 h of the end of the last one lasts 4 times longer.
    const level = b?.until != null && f.now - b.until < DAY ? b.level + 1 : 0
    const until = f.now + blockDuration(level)
    return { wait: until - f.now, start: { accountId: f.accountId, kind, scope, startedAt: f.now, until, level, countsFrom: b?.countsFrom ?? 0 } }
  }
}
