/**
 * Operator use cases behind the CLI: accounts, API keys and credits.
 * A request the operator got wrong (unknown account, bad amount) throws
 * OperatorError, whose message is the one line the CLI prints.
 *
 * Built with an actor (`as()`), every change writes its audit entry in its
 * own transaction (otp/audit.ts).
 */
import type { Clock } from '../lib/clock.ts'
import type { Hasher } from '../lib/secrets.ts'
import { generateKey, KEY_PREFIX } from './api-keys.ts'
import { type Actor, type AuditAction, audit } from './audit.ts'
import { OperatorError } from './operator-error.ts'
import type { AccountRow, KeyRow, LedgerRow, MessagingChange, Repos, Storage } from './ports/index.ts'
import type { KeyStatus } from './types.ts'

export { OperatorError }

export const DEFAULT_ACCOUNT = 'default'
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const MAX_GRANT = 1_000_000_000
const DAY_MS = 86_400_000
/** `otpd keys rotate --grace`: by default a day for every client to take the new key; at most 30 days of two keys. */
export const DEFAULT_ROTATION_GRACE_MS = DAY_MS
export const MAX_ROTATION_GRACE_MS = 30 * DAY_MS

const KEY_ACTIONS: Record<KeyStatus, AuditAction> = { active: 'key.enabled', disabled: 'key.disabled', revoked: 'key.revoked' }

export class Admin {
  constructor(
    private readonly storage: Storage,
    private readonly hasher: Hasher,
    private readonly clock: Clock,
    private readonly actor?: Actor,
    private readonly keyListeners: (() => void)[] = [],
  ) {}

  /** The same use cases, each change written to the audit log as `actor`'s (key listeners shared). */
  as(actor: Actor): Admin {
    return new Admin(this.storage, this.hasher, this.clock, actor, this.keyListeners)
  }

  account(name: string = DEFAULT_ACCOUNT): Promise<AccountRow> {
    return this.storage.read((r) => accountIn(r, name))
  }

  async createAccount(name: string): Promise<AccountRow> {
    if (!ACCOUNT_NAME.test(name)) {
      throw new OperatorError(`account name '${name}' is not valid: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`)
    }
    return this.storage.write(async (r) => {
      if (await r.admin.findAccount(name)) throw new OperatorError(`account '${name}' already exists`, 'conflict')
      const at = this.clock.now()
      await audit(r, this.actor, at, 'account.created', `account ${name}`)
      return r.admin.insertAccount(name, at)
    })
  }

  listAccounts(): Promise<AccountRow[]> {
    return this.storage.read((r) => r.admin.listAccounts())
  }

  async setCodeLength(name: string, length: number): Promise<AccountRow> {
    if (!Number.isInteger(length) || length < 4 || length > 10) {
      throw new OperatorError(`code length must be an integer from 4 to 10, got '${length}'`)
    }
    return this.storage.write(async (r) => {
      const a = await accountIn(r, name)
      await r.admin.setCodeLength(a.id, length)
      await audit(r, this.actor, this.clock.now(), 'account.code_length_changed', `account ${a.name}`, { from: a.codeLength, to: length })
      return { ...a, codeLength: length }
    })
  }

  /**
   * The account's language and autofill domain (docs/messages.md); null
   * removes one. The caller checks them (the CLI resolves the language against
   * the texts in force): a send skips a language it no longer knows.
   */
  async setMessaging(name: string, change: MessagingChange): Promise<{ name: string; locale: string | null; otpDomain: string | null; customText: boolean }> {
    return this.storage.write(async (r) => {
      const a = await accountIn(r, name)
      const before = await r.credits.sendProfile(a.id)
      await r.admin.setMessaging(a.id, change)
      const p = await r.credits.sendProfile(a.id)
      // The autofill domain decides which site a browser offers the code to: every change is audited.
      const changed = (['locale', 'otpDomain', 'customText'] as const).filter((k) => change[k] !== undefined)
      const details = Object.fromEntries(changed.map((k) => [k, { from: before[k], to: p[k] }]))
      await audit(r, this.actor, this.clock.now(), 'account.settings_changed', `account ${a.name}`, details)
      return { name: a.name, locale: p.locale, otpDomain: p.otpDomain, customText: p.customText }
    })
  }

  /** Creates a key; the returned `key` is the only time its value exists in clear. */
  async createKey(opts: { name?: string; account?: string }): Promise<{ key: string; id: number; prefix: string; name: string; account: string }> {
    const name = opts.name ?? ''
    if (name.length > 200 || /[\u0000-\u001f\u007f]/.test(name)) throw new OperatorError('key name must be a single line of at most 200 characters')
    // Drawn once, outside the transaction: a transaction run again keeps the same key.
    const k = generateKey(this.hasher)
    return this.storage.write(async (r) => {
      const account = await accountIn(r, opts.account)
      const at = this.clock.now()
      const id = await r.admin.insertKey({ accountId: account.id, name, prefix: k.prefix, keyHash: k.keyHash, at })
      await audit(r, this.actor, at, 'key.created', `key ${id}`, { prefix: k.prefix, name, account: account.name })
      return { key: k.key, id, prefix: k.prefix, name, account: account.name }
    })
  }

  /**
   * A new key for the same account and name; the old one keeps working for
   * `graceMs` (0: revoked at once), then is refused as revoked
   * (docs/operating.md#rotating-a-key). Only an active key that has not been
   * rotated already can be.
   */
  async rotateKey(idOrPrefix: string, graceMs: number): Promise<{ key: string; id: number; prefix: string; name: string; account: string; replaced: KeyRow }> {
    if (!Number.isSafeInteger(graceMs) || graceMs < 0 || graceMs > MAX_ROTATION_GRACE_MS)
      throw new OperatorError(`the grace period must be from 0 to ${MAX_ROTATION_GRACE_MS / DAY_MS} days`)
    const k = generateKey(this.hasher)
    const made = await this.storage.write(async (r) => {
      const old = await resolveKey(r, idOrPrefix)
      const at = this.clock.now()
      if (old.status !== 'active') throw new OperatorError(`key ${old.id} (${old.prefix}) is ${old.status}: only an active key can be rotated`, 'conflict')
      if (old.expiresAt !== null)
        throw new OperatorError(`key ${old.id} (${old.prefix}) was rotated already; it stops working at ${new Date(old.expiresAt).toISOString()}`, 'conflict')
      const account = await accountIn(r, old.account)
      const id = await r.admin.insertKey({ accountId: account.id, name: old.name, prefix: k.prefix, keyHash: k.keyHash, at })
      const expiresAt = at + graceMs
      if (graceMs === 0) await r.admin.setKeyStatus(old.id, 'revoked')
      else await r.admin.setKeyExpiry(old.id, expiresAt)
      await audit(r, this.actor, at, 'key.rotated', `key ${old.id}`, {
        prefix: old.prefix,
        account: account.name,
        new_key: id,
        new_prefix: k.prefix,
        expires_at: expiresAt,
      })
      const replaced: KeyRow = graceMs === 0 ? { ...old, status: 'revoked' } : { ...old, expiresAt }
      return { key: k.key, id, prefix: k.prefix, name: old.name, account: account.name, replaced }
    })
    for (const listener of this.keyListeners) listener()
    return made
  }

  listKeys(account?: string): Promise<KeyRow[]> {
    return this.storage.read(async (r) => r.admin.listKeys(account === undefined ? undefined : (await accountIn(r, account)).id))
  }

  /** Called after every key status change made through this Admin (the server's key cache listens). */
  onKeyChange(listener: () => void): void {
    this.keyListeners.push(listener)
  }

  /** enable / disable / revoke. A revoked key is gone for good: it cannot be enabled again. */
  async setKeyStatus(idOrPrefix: string, status: KeyStatus): Promise<KeyRow> {
    const row = await this.storage.write(async (r) => {
      const key = await resolveKey(r, idOrPrefix)
      if (key.status === 'revoked' && status !== 'revoked') {
        throw new OperatorError(`key ${key.id} (${key.prefix}) is revoked and cannot be changed; create a new key instead`, 'conflict')
      }
      await r.admin.setKeyStatus(key.id, status)
      await audit(r, this.actor, this.clock.now(), KEY_ACTIONS[status], `key ${key.id}`, { prefix: key.prefix, account: key.account, from: key.status })
      return { ...key, status }
    })
    for (const listener of this.keyListeners) listener()
    return row
  }

  async addCredits(amount: number, account?: string, note?: string): Promise<{ account: string; balance: number }> {
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_GRANT) {
      throw new OperatorError(`amount must be a whole number from 1 to ${MAX_GRANT}, got '${amount}'`)
    }
    return this.storage.write(async (r) => {
      const a = await accountIn(r, account)
      const at = this.clock.now()
      await r.credits.post({ accountId: a.id, kind: 'grant', amount, note, at })
      const balance = await r.credits.balance(a.id)
      await audit(r, this.actor, at, 'credits.added', `account ${a.name}`, { amount, note: note ?? null, balance })
      return { account: a.name, balance }
    })
  }

  /** A correction: a 'debit' ledger entry with a note, refused when the balance does not cover it (never below zero). */
  async deductCredits(amount: number, opts: { account?: string; note?: string } = {}): Promise<{ account: string; balance: number }> {
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_GRANT) {
      throw new OperatorError(`amount must be a whole number from 1 to ${MAX_GRANT}, got '${amount}'`)
    }
    return this.storage.write(async (r) => {
      const a = await accountIn(r, opts.account)
      // The guarded debit: the check and the move are one statement, so it never goes below zero.
      const at = this.clock.now()
      if (!(await r.credits.debit({ accountId: a.id, amount, note: opts.note, at }))) {
        throw new OperatorError(`cannot deduct ${amount} credits: account '${a.name}' has only ${await r.credits.balance(a.id)}`, 'conflict')
      }
      const balance = await r.credits.balance(a.id)
      await audit(r, this.actor, at, 'credits.deducted', `account ${a.name}`, { amount, note: opts.note ?? null, balance })
      return { account: a.name, balance }
    })
  }

  async balance(account?: string): Promise<{ account: string; balance: number }> {
    const a = await this.account(account)
    return { account: a.name, balance: a.balance }
  }

  /** The ledger, newest first; `beforeId` continues from a page's last entry. */
  history(account?: string, limit = 50, beforeId?: number): Promise<{ account: string; entries: LedgerRow[] }> {
    return this.storage.read(async (r) => {
      const a = await accountIn(r, account)
      return { account: a.name, entries: await r.admin.ledger(a.id, limit, beforeId) }
    })
  }
}

async function accountIn(r: Repos, name: string = DEFAULT_ACCOUNT): Promise<AccountRow> {
  const a = await r.admin.findAccount(name)
  if (!a) throw new OperatorError(`account '${name}' does not exist (create it with: otpd accounts create ${name})`, 'not_found')
  return a
}

async function resolveKey(r: Repos, idOrPrefix: string): Promise<KeyRow> {
  let ref = idOrPrefix.trim()
  if (ref.startsWith(KEY_PREFIX)) ref = ref.slice(KEY_PREFIX.length, KEY_PREFIX.length + 8)
  const found = await r.admin.findKeys(ref)
  if (found.length === 0) throw new OperatorError(`no key has id or prefix '${idOrPrefix}' (see: otpd keys list)`, 'not_found')
  if (found.length > 1) throw new OperatorError(`'${idOrPrefix}' matches ${found.length} keys; use the numeric id from: otpd keys list`)
  return found[0]!
}
