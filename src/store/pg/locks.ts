/**
 * The locks that make the domain's rules exact across nodes. Every rule's
 * read and write share one transaction (otp/ports.ts); on PostgreSQL, at
 * READ COMMITTED, the transaction first takes the lock of the rule's subject,
 * and every statement after it sees what the previous holder committed:
 *
 * - the key's row (`SELECT ... FOR UPDATE` on api_keys): per-key limit;
 * - the verification's row (`FOR UPDATE` in findForKey): single use, attempts
 *   and lockout;
 * - the recipient (`pg_advisory_xact_lock` on its hash): per-recipient send
 *   windows and the recipient failure cap (the subject has no row to lock);
 * - the account's balance: a guarded UPDATE (`balance >= amount`), atomic by
 *   itself.
 *
 * Always in that order (key, verification, recipient, account), so two
 * transactions rarely wait on each other in a cycle; when they do, PostgreSQL
 * aborts one (40P01) and the storage runs it again (store/pg/storage.ts).
 * Each lock is taken once per transaction: `TxLocks` remembers what it holds.
 * Reads (`Storage.read`) take none. A lock is sent pipelined (Tx.exec): the
 * statements after it run once the server has granted it, so it holds for
 * them exactly as if it had been awaited, without a round trip of its own.
 */
import type { Tx } from './client.ts'

/** Advisory lock keys of the recipient space: the first 8 bytes of the (already keyed) hash. */
function recipientLockKey(hash: Uint8Array): bigint {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).readBigInt64BE(0)
}

export class TxLocks {
  private readonly keys = new Set<number>()
  private readonly recipients = new Set<string>()

  constructor(
    private readonly tx: Tx,
    /** False for reads: nothing is locked. */
    readonly locking: boolean,
  ) {}

  async key(keyId: number): Promise<void> {
    if (!this.locking || this.keys.has(keyId)) return
    this.tx.exec('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [keyId])
    this.keys.add(keyId)
  }

  async recipient(hash: Uint8Array): Promise<void> {
    if (!this.locking) return
    const name = Buffer.from(hash).toString('hex')
    if (this.recipients.has(name)) return
    this.tx.exec('SELECT pg_advisory_xact_lock($1::bigint)', [recipientLockKey(hash).toString()])
    this.recipients.add(name)
  }
}
