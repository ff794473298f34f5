/**
 * The key each `[hooks.NAME]` sends under (docs/integrations.md#how-a-hook-is-billed):
 * a row of api_keys marked with the hook's name, whose secret no one holds.
 * It gives a hook's sends what a key gives a client's: the account, the
 * per-key request window, the Idempotency-Key scope that drops retries, and
 * the last use `otpd hooks list` shows.
 */

export interface HookKey {
  id: number
  hook: string
  accountId: number
  lastUsedAt: number | null
}

export interface HookKeyStore {
  find(hook: string): Promise<HookKey | undefined>
  /** A new hook key; `keyHash` is a value no presented key hashes to. */
  insert(k: { hook: string; accountId: number; keyHash: string; at: number }): Promise<number>
  /** The hook now bills another account (its config changed). */
  moveTo(keyId: number, accountId: number): Promise<void>
  list(): Promise<HookKey[]>
}
