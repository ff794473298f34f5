/**
 * The locks that make the domain's rules exact across nodes. Every rule's
 * read and write share one transaction (otp/ports/storage.ts); on PostgreSQL, at
 * READ COMMITTED, the transaction first takes the lock of the rule's subject,
 * and every statement after it sees what the previous holder committed:
 *
 * - the verification's row (`FOR UPDATE` in findForKey): single use, attempts
 *   and lockout;
 * - the recipient (`pg_advisory_xact_lock` on its hash): per-recipient send
 *   windows and the recipient failure cap (the subject has no row to lock);
 * - the account's balance: a guarded UPDATE (`balance >= amount`), atomic by
 *   itself;
 * - the key's row (`FOR NO KEY UPDATE` on api_keys): the per-key limit, at
 *   COMMIT only (Tx.atCommit): the window is read without it, then, in one
 *   statement sent with COMMIT (`otpd_key_hit`), the lock is taken, the
 *   window read again and the hit recorded; a window that filled meanwhile
 *   runs the write again (store/pg/event-logs.ts). So one busy key's
 *   transactions wait for one another's COMMIT, not for each other's whole
 *   run, nor for a round trip.
 *
 * Always in that order (verification, recipient, account, key), so two
 * transactions rarely wait on each other in a cycle; when they do, PostgreSQL
 * aborts one (40P01) and the storage runs it again (store/pg/storage.ts).
 * Each lock is taken once per transaction: `TxLocks` remembers what it holds.
 * Reads (`Storage.read`) take none. A lock is sent pipelined (Tx.exec): the
 * statements after it run once the server has granted it, so it holds for
 * them exactly as if it had been awaited, without a round trip of its own.
 *
 * The lifecycle rules (idempotency, events) fit that order: an
 * Idempotency-Key's record is decided under an advisory lock of its scope,
 * taken first (store/pg/idempotency-store.ts); an event's `sequence` under its verification's row lock;
 * the expiry scan under an advisory lock of its own
 * (store/pg/event-store.ts), which no request takes.
 *
 * The fraud guard (otp/fraud.ts check) decides its rules inside the send,
 * after the recipient's lock (its reads travel with the guard's: otp/send.ts),
 * under advisory locks of their
 * subjects where a decision needs one, always in this order: the end-user IP
 * (rule 2), the account's country (rule 3), each rule 4 scope, the account
 * (rule 5). No transaction takes the recipient after any of them. Its counters
 * (approvals, minutes) are moved by atomic upserts and take no lock.
 */
import { createHash } from 'node:crypto'
import type { Tx } from './client.ts'

/** Advisory lock keys of the recipient space: the first 8 bytes of the (already keyed) hash. */
function recipientLockKey(hash: Uint8Array): bigint {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).readBigInt64BE(0)
}

/** The advisory lock key of the expiry scan ('otpd' in ASCII, then 2; store/pg/guards.ts START_LOCK is 1). */
const EXPIRY_SCAN_LOCK = 0x6f747064_00000002n

export class TxLocks {
  private readonly recipients = new Set<string>()
  private readonly verifications = new Set<number>()
  private scanning = false
  private readonly names = new Set<string>()

  constructor(
    private readonly tx: Tx,
    /** False for reads: nothing is locked. */
    readonly locking: boolean,
  ) {}

  async recipient(hash: Uint8Array): Promise<void> {
    if (!this.locking) return
    const name = Buffer.from(hash).toString('hex')
    if (this.recipients.has(name)) return
    this.tx.exec('SELECT pg_advisory_xact_lock($1::bigint)', [recipientLockKey(hash).toString()])
    this.recipients.add(name)
  }

  /** The verification's row (`FOR UPDATE`), as findForKey takes it: a no-op when this transaction holds it. */
  async verification(seq: number): Promise<void> {
    if (!this.locking || this.verifications.has(seq)) return
    this.tx.exec('SELECT 1 FROM verifications WHERE seq = $1 FOR UPDATE', [seq])
    this.verifications.add(seq)
  }

  /** The transaction took the verification's row lock by itself (a `FOR UPDATE` read, or an UPDATE of the row). */
  holdsVerification(seq: number): void {
    if (this.locking) this.verifications.add(seq)
  }

  /** The expiry scan (otp/events.ts reportExpired): one node at a time reads and moves its cursor. */
  async expiryScan(): Promise<void> {
    if (!this.locking || this.scanning) return
    this.tx.exec('SELECT pg_advisory_xact_lock($1::bigint)', [EXPIRY_SCAN_LOCK.toString()])
    this.scanning = true
  }

  /** An advisory lock named by a string (its SHA-256's first 8 bytes): the fraud guard's subjects. True when taken by this call. */
  async named(name: string): Promise<boolean> {
    if (!this.locking || this.names.has(name)) return false
    const key = createHash('sha256').update(name).digest().readBigInt64BE(0)
    this.tx.exec('SELECT pg_advisory_xact_lock($1::bigint)', [key.toString()])
    this.names.add(name)
    return true
  }
}
