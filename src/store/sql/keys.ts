/**
 * API keys as a request finds them, and the recipient failure log
 * (otp/ports/keys.ts): the statements both engines run. The per-key hit log
 * is each engine's own (store/sqlite/event-logs.ts, store/pg/event-logs.ts):
 * SQLite numbers a key's hits from a copy kept under its single writer,
 * PostgreSQL under the key's row lock in one statement.
 */
import type { StoredKey } from '../../otp/types.ts'
import { num, numOrNull, type Row } from './values.ts'

export const KEY_SQL = {
  findByPrefix: 'SELECT id, account_id, prefix, status, key_hash, expires_at FROM api_keys WHERE prefix = $1',
  touch: 'UPDATE api_keys SET last_used_at = $2 WHERE id = $1',
  // The n-th most recent failure: `$2` is n - 1.
  nthFailure: 'SELECT at FROM recipient_failures WHERE recipient_hash = $1 ORDER BY at DESC LIMIT 1 OFFSET $2',
  // The (n-1)-th and n-th most recent failures, newest first: `$2` is n - 2 (n >= 2).
  nthFailurePair: 'SELECT at FROM recipient_failures WHERE recipient_hash = $1 ORDER BY at DESC LIMIT 2 OFFSET $2',
  recordFailure: 'INSERT INTO recipient_failures (recipient_hash, at) VALUES ($1, $2)',
} as const

/** nthFailurePair's rows (newest first) as FailureLog.nthLatestPair answers them. */
export function toFailurePair(rows: readonly Row[]): { nth: number | undefined; previous: number | undefined } {
  return { previous: rows[0] === undefined ? undefined : num(rows[0].at), nth: rows[1] === undefined ? undefined : num(rows[1].at) }
}

export function toStoredKey(r: Row): StoredKey {
  return {
    id: num(r.id),
    accountId: num(r.account_id),
    prefix: r.prefix as string,
    status: r.status as StoredKey['status'],
    keyHash: r.key_hash as string,
    expiresAt: numOrNull(r.expires_at),
  }
}
