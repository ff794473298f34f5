/**
 * Operator use cases of the fraud guard behind the CLI (docs/fraud-guard.md):
 * an account's guard settings, `fraud status` and `fraud unblock`. A
 * request the operator got wrong throws OperatorError (its message is the
 * line the CLI prints).
 *
 * A change is committed to the database, where the next send reads it inside
 * its own transaction (store/sqlite/fraud-store.ts): a running server applies
 * it from its next send on, whichever process made it.
 */
import type { Clock } from '../lib/clock.ts'
import { isKnownCountry } from '../lib/phone-country.ts'
import { WHATSAPP_SCOPE } from './fraud.ts'
import { DEFAULT_ACCOUNT, OperatorError } from './admin.ts'
import { type Actor, audit } from './audit.ts'
import type { AccountFraudSettings, AccountRow, Repos, ScopeKind, Storage } from './ports/index.ts'

const DAY = 86_400_000

export interface FraudBlockView {
  account: string
  rule: 'conversion'
  kind: ScopeKind
  scope: string
  /** 0 = the first block (15 min), then x4 each. */
  level: number
  startedAt: number | null
  until: number
}

export interface CountryView {
  account: string
  country: string
  sends: number
  approved: number
  /** approved / sends. */
  conversion: number
}

export interface FraudStatus {
  /** Each account's own settings (null countries: the config's). */
  accounts: AccountFraudView[]
  blocks: FraudBlockView[]
  countries: CountryView[]
}

export interface AccountFraudView extends AccountFraudSettings {
  name: string
}

export class FraudAdmin {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly actor?: Actor,
  ) {}

  /** The same use cases, each change written to the audit log as `actor`'s (otp/audit.ts). */
  as(actor: Actor): FraudAdmin {
    return new FraudAdmin(this.storage, this.clock, actor)
  }

  async setAccount(name: string, change: Partial<AccountFraudSettings>): Promise<AccountFraudView> {
    if (change.allowedCountries) {
      const unknown = change.allowedCountries.filter((c) => c !== '*' && !isKnownCountry(c))
      if (unknown.length > 0) {
        throw new OperatorError(
          `unknown country code${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: use ISO 3166-1 alpha-2 codes (US, GB, ...), ZZ for numbers of no known country, or '*' for all`,
        )
      }
      if (change.allowedCountries.includes('*') && change.allowedCountries.length > 1)
        throw new OperatorError("--countries takes '*' alone or a list of country codes")
    }
    const limit = change.dailyCreditLimit
    if (limit != null && (!Number.isSafeInteger(limit) || limit < 1))
      throw new OperatorError(`daily credit limit must be a whole number of at least 1, or none, got '${limit}'`)
    return this.storage.write(async (r) => {
      const a = await accountIn(r, name)
      const before = await r.fraud.accountSettings(a.id)
      await r.fraud.setAccountSettings(a.id, change)
      const after = await r.fraud.accountSettings(a.id)
      const changed = (Object.keys(change) as (keyof AccountFraudSettings)[]).filter((k) => change[k] !== undefined)
      const details = Object.fromEntries(changed.map((k) => [k, { from: before[k], to: after[k] }]))
      await audit(r, this.actor, this.clock.now(), 'account.settings_changed', `account ${a.name}`, details)
      return { name: a.name, ...after }
    })
  }

  account(name: string): Promise<AccountFraudView> {
    return this.storage.read(async (r) => {
      const a = await accountIn(r, name)
      return { name: a.name, ...(await r.fraud.accountSettings(a.id)) }
    })
  }

  /** Every account's own guard settings (null countries: the config's), by name: `otpd accounts list` shows them. */
  accounts(): Promise<AccountFraudView[]> {
    return this.storage.read(async (r) => {
      const out: AccountFraudView[] = []
      for (const a of await r.admin.listAccounts()) out.push({ name: a.name, ...(await r.fraud.accountSettings(a.id)) })
      return out
    })
  }

  /** Active blocks, and sends, approvals and conversion by country over 24 h; every account without `account`. */
  status(account?: string): Promise<FraudStatus> {
    const now = this.clock.now()
    return this.storage.read(async (r) => {
      const accounts = await r.admin.listAccounts()
      const id = account === undefined ? undefined : (await accountIn(r, account)).id
      const names = new Map(accounts.map((a) => [a.id, a.name]))
      const blocks = (await r.fraud.activeBlocks(id, now)).map((b) => ({
        account: names.get(b.accountId) ?? String(b.accountId),
        rule: 'conversion' as const,
        kind: b.kind,
        scope: b.scope,
        level: b.level,
        startedAt: b.startedAt,
        until: b.until!,
      }))
      const countries = (await r.fraud.countryStats(id, now - DAY)).map((c) => ({
        account: names.get(c.accountId) ?? String(c.accountId),
        country: c.country,
        sends: c.sends,
        approved: c.approved,
        conversion: c.sends === 0 ? 0 : c.approved / c.sends,
      }))
      const settings: AccountFraudView[] = []
      for (const a of accounts) if (id === undefined || a.id === id) settings.push({ name: a.name, ...(await r.fraud.accountSettings(a.id)) })
      return { accounts: settings, blocks, countries }
    })
  }

  /**
   * Ends the scope's block, resets its escalation, and makes rule 4 count the
   * scope's sends from now on (the operator vouches for what came before).
   * `wasBlocked` false: there was no active block (the reset still applies).
   */
  async unblock(scopeArg: string, account: string = DEFAULT_ACCOUNT): Promise<{ account: string; kind: ScopeKind; scope: string; wasBlocked: boolean }> {
    const { kind, scope } = parseScope(scopeArg)
    const now = this.clock.now()
    return this.storage.write(async (r) => {
      const a = await accountIn(r, account)
      await r.fraud.lockScope(a.id, kind, scope)
      const b = await r.fraud.block(a.id, kind, scope)
      const wasBlocked = b?.until != null && now < b.until
      await r.fraud.saveBlock({ accountId: a.id, kind, scope, startedAt: null, until: null, level: 0, countsFrom: now })
      await audit(r, this.actor, now, 'fraud.unblocked', `${kind} ${scope}`, { account: a.name, was_blocked: wasBlocked, level: b?.level ?? 0 })
      return { account: a.name, kind, scope, wasBlocked }
    })
  }
}

/** `UZ` (a country) or `+99890123` (a prefix, as `fraud status` prints it), each with `whatsapp:` before it for WhatsApp's own scopes. */
export function parseScope(arg: string): { kind: ScopeKind; scope: string } {
  const trimmed = arg.trim()
  const channel = trimmed.toLowerCase().startsWith(WHATSAPP_SCOPE) ? WHATSAPP_SCOPE : ''
  const s = trimmed.slice(channel.length)
  if (/^[A-Za-z]{2}$/.test(s)) {
    const country = s.toUpperCase()
    if (!isKnownCountry(country)) throw new OperatorError(`'${arg}' is no country code: use an ISO 3166-1 alpha-2 code (UZ, GB, ...) or a prefix (+99890123)`)
    return { kind: 'country', scope: channel + country }
  }
  if (/^\+[1-9][0-9]{0,14}$/.test(s)) return { kind: 'prefix', scope: channel + s }
  throw new OperatorError(`'${arg}' is not a scope: give a country code (UZ) or a prefix (+99890123) as otpd fraud status shows them`)
}

async function accountIn(r: Repos, name: string): Promise<AccountRow> {
  const a = await r.admin.findAccount(name)
  if (!a) throw new OperatorError(`account '${name}' does not exist (create it with: otpd accounts create ${name})`, 'not_found')
  return a
}
