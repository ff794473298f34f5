/**
 * Operator use cases behind the CLI: accounts, API keys and credits.
 * A request the operator got wrong (unknown account, bad amount) throws
 * OperatorError, whose message is the one line the CLI prints.
 */
import type { Clock } from '../lib/clock.ts'
import type { Hasher } from '../lib/secrets.ts'
import { generateKey, KEY_PREFIX } from './api-keys.ts'
import type { CreditStore, Transactor } from './ports.ts'
import type { KeyStatus } from './types.ts'

export class OperatorError extends Error {}

export interface AccountRow {
  id: number
  name: string
  codeLength: number | null
  balance: number
  createdAt: number
}

export interface KeyRow {
  id: number
  account: string
  name: string
  prefix: string
  status: KeyStatus
  createdAt: number
  lastUsedAt: number | null
}

export interface LedgerRow {
  id: number
  kind: 'grant' | 'debit' | 'refund'
  amount: number
  verificationId: string | null
  note: string | null
  createdAt: number
}

export interface AdminStore {
  findAccount(name: string): AccountRow | undefined
  listAccounts(): AccountRow[]
  insertAccount(name: string, at: number): AccountRow
  setCodeLength(accountId: number, length: number): void
  insertKey(k: { accountId: number; name: string; prefix: string; keyHash: string; at: number }): number
  listKeys(accountId?: number): KeyRow[]
  findKeys(idOrPrefix: string): KeyRow[]
  setKeyStatus(id: number, status: KeyStatus): void
  ledger(accountId: number, limit: number): LedgerRow[]
}

export const DEFAULT_ACCOUNT = 'default'
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const MAX_GRANT = 1_000_000_000

export class Admin {
  private readonly keyListeners: (() => void)[] = []

  constructor(
    private readonly tx: Transactor,
    private readonly store: AdminStore,
    private readonly credits: CreditStore,
    private readonly hasher: Hasher,
    private readonly clock: Clock,
  ) {}

  account(name: string = DEFAULT_ACCOUNT): AccountRow {
    const a = this.store.findAccount(name)
    if (!a) throw new OperatorError(`account '${name}' does not exist (create it with: otpd accounts create ${name})`)
    return a
  }

  createAccount(name: string): AccountRow {
    if (!ACCOUNT_NAME.test(name)) {
      throw new OperatorError(`account name '${name}' is not valid: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`)
    }
    return this.tx.atomically(() => {
      if (this.store.findAccount(name)) throw new OperatorError(`account '${name}' already exists`)
      return this.store.insertAccount(name, this.clock.now())
    })
  }

  listAccounts(): AccountRow[] {
    return this.store.listAccounts()
  }

  setCodeLength(name: string, length: number): AccountRow {
    if (!Number.isInteger(length) || length < 4 || length > 10) {
      throw new OperatorError(`code length must be an integer from 4 to 10, got '${length}'`)
    }
    return this.tx.atomically(() => {
      const a = this.account(name)
      this.store.setCodeLength(a.id, length)
      return { ...a, codeLength: length }
    })
  }

  /** Creates a key; the returned `key` is the only time its value exists in clear. */
  createKey(opts: { name?: string; account?: string }): { key: string; id: number; prefix: string; name: string; account: string } {
    const name = opts.name ?? ''
    if (name.length > 200 || /[\u0000-\u001f\u007f]/.test(name)) throw new OperatorError('key name must be a single line of at most 200 characters')
    return this.tx.atomically(() => {
      const account = this.account(opts.account)
      const k = generateKey(this.hasher)
      const id = this.store.insertKey({ accountId: account.id, name, prefix: k.prefix, keyHash: k.keyHash, at: this.clock.now() })
      return { key: k.key, id, prefix: k.prefix, name, account: account.name }
    })
  }

  listKeys(account?: string): KeyRow[] {
    return this.store.listKeys(account === undefined ? undefined : this.account(account).id)
  }

  /** Called after every key status change made through this Admin (the server's key cache listens). */
  onKeyChange(listener: () => void): void {
    this.keyListeners.push(listener)
  }

  /** enable / disable / revoke. A revoked key is gone for good: it cannot be enabled again. */
  setKeyStatus(idOrPrefix: string, status: KeyStatus): KeyRow {
    const row = this.tx.atomically(() => {
      const key = this.resolveKey(idOrPrefix)
      if (key.status === 'revoked' && status !== 'revoked') {
        throw new OperatorError(`key ${key.id} (${key.prefix}) is revoked and cannot be changed; create a new key instead`)
      }
      this.store.setKeyStatus(key.id, status)
      return { ...key, status }
    })
    for (const listener of this.keyListeners) listener()
    return row
  }

  private resolveKey(idOrPrefix: string): KeyRow {
    let ref = idOrPrefix.trim()
    if (ref.startsWith(KEY_PREFIX)) ref = ref.slice(KEY_PREFIX.length, KEY_PREFIX.length + 8)
    const found = this.store.findKeys(ref)
    if (found.length === 0) throw new OperatorError(`no key has id or prefix '${idOrPrefix}' (see: otpd keys list)`)
    if (found.length > 1) throw new OperatorError(`'${idOrPrefix}' matches ${found.length} keys; use the numeric id from: otpd keys list`)
    return found[0]!
  }

  addCredits(amount: number, account?: string, note?: string): { account: string; balance: number } {
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_GRANT) {
      throw new OperatorError(`amount must be a whole number from 1 to ${MAX_GRANT}, got '${amount}'`)
    }
    return this.tx.atomically(() => {
      const a = this.account(account)
      this.credits.post({ accountId: a.id, kind: 'grant', amount, note, at: this.clock.now() })
      return { account: a.name, balance: this.credits.balance(a.id) }
    })
  }

  /** A correction: a 'debit' ledger entry with a note, refused when the balance does not cover it (never below zero). */
  deductCredits(amount: number, opts: { account?: string; note?: string } = {}): { account: string; balance: number } {
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_GRANT) {
      throw new OperatorError(`amount must be a whole number from 1 to ${MAX_GRANT}, got '${amount}'`)
    }
    return this.tx.atomically(() => {
      const a = this.account(opts.account)
      const balance = this.credits.balance(a.id)
      if (balance < amount) throw new OperatorError(`cannot deduct ${amount} credits: account '${a.name}' has only ${balance}`)
      this.credits.post({ accountId: a.id, kind: 'debit', amount, note: opts.note, at: this.clock.now() })
      return { account: a.name, balance: this.credits.balance(a.id) }
    })
  }

  balance(account?: string): { account: string; balance: number } {
    const a = this.account(account)
    return { account: a.name, balance: a.balance }
  }

  history(account?: string, limit = 50): { account: string; entries: LedgerRow[] } {
    const a = this.account(account)
    return { account: a.name, entries: this.store.ledger(a.id, limit) }
  }
}
