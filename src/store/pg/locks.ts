/**
 * The locks that make the domain's rules exact across nodes
 * (docs/multi-node.md#the-order-of-the-locks). At READ COMMITTED a rule's
 * transaction first locks its subject, so every statement after it sees what
 * the previous holder committed. Always in one order, so two transactions rarely
 * wait on each other in a cycle (then PostgreSQL aborts one, 40P01, and the
 * storage runs it again): the verification's row, the recipient, the account's
 * balance, the key's row (at COMMIT); the fraud guard's after the recipient's.
 * Each is taken once per transaction (`TxLocks`), sent pipelined (Tx.exec).
 */
import { createHash } from 'node:crypto'
import type { Tx } from './client.ts'

/** Advisory lock keys of the recipient space: the first 8 bytes of the (already keyed) hash. */
function recipientLockKey(hash: Uint8Array): bigint {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).readBigInt64BE(0)
}

/** The advisory lock key of the expiry scan ('otpd' in ASCII, then 2; store/pg/start-checks.ts START_LOCK is 1). */
const EXPIRY_SCAN_LOCK = 0x6f747064_00000002n
/** The advisory lock key of the event deliveries' claim ('otpd', then 3). */
const DELIVERY_CLAIM_LOCK = 0x6f747064_00000003n

export class TxLocks {
  private readonly recipients = new Set<string>()
  private readonly verifications = new Set<number>()
  private scanning = false
  private claiming = false
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

  /**
   * The event deliveries' claim (store/pg/webhook-store.ts): one node at a
   * time counts an endpoint's leases and adds to them, so its limit holds
   * across nodes. Taken after every row lock the transaction takes (a claim
   * comes last in its write), so it closes no cycle.
   */
  async deliveryClaim(): Promise<void> {
    if (!this.locking || this.claiming) return
    this.tx.exec('SELECT pg_advisory_xact_lock($1::bigint)', [DELIVERY_CLAIM_LOCK.toString()])
    this.claiming = true
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
