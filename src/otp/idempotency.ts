/**
 * Idempotency keys (docs/api.md#idempotency-keys). The first request with a key
 * runs; its answer is stored in the write transaction that decides it (a row,
 * unique per scope: exact across processes, nothing in memory), and a later
 * request with the same key and body gets that answer back. A real send is
 * recorded `running` with the answer it gives once in force, and made `done` by
 * whatever settles its delivery: the send's outcome, a receipt (receipts.ts) or
 * recovery (recovery.ts), so no key answers "in progress" for ever. The body is
 * kept only as a keyed hash: it may hold a recipient and a code.
 */
import type { Hasher } from '../lib/secrets.ts'
import type { IdempotencyScope, Repos, StoredAnswer } from './ports/index.ts'

export const HASH_PURPOSE_REQUEST = 'idempotency-request'
export const DEFAULT_RETENTION_HOURS = 24

/** A request that carries an Idempotency-Key, as the domain sees it. */
export interface IdempotentRequest<O> {
  scope: IdempotencyScope
  /** The JSON body in canonical form (lib/canonical-json.ts): same fields and values, same text. */
  canonicalBody: string
  /** What this request answers for `outcome`, exactly as it would be replayed (made by the HTTP layer). */
  answer(outcome: O): StoredAnswer
  /** How long the first request's answer holds, when not `retention_hours` (a hook's code lifetime: docs/integrations.md#retries). */
  retentionMs?: number
}

/** What a request with a used key gets instead of running. */
export type IdempotencyOutcome = { kind: 'replay'; answer: StoredAnswer } | { kind: 'idempotency_conflict' } | { kind: 'idempotency_in_progress' }

/** `retentionHours` is read on every request, so a reload changes it in place. */
export interface IdempotencySettings {
  retentionHours: number
}

export class Idempotency {
  constructor(
    private readonly hasher: Hasher,
    readonly settings: IdempotencySettings,
  ) {}

  /**
   * Inside the operation's transaction, after the per-key limit: the answer
   * for a key already used in this scope, or null when this request is the
   * first (or the earlier one has expired) and runs.
   */
  async check<O>(r: Repos, req: IdempotentRequest<O>, now: number): Promise<IdempotencyOutcome | null> {
    const found = await r.idempotency.find(req.scope, now - (req.retentionMs ?? this.settings.retentionHours * 3_600_000))
    if (!found) return null
    if (!sameBytes(found.fingerprint, this.fingerprint(req))) return { kind: 'idempotency_conflict' }
    if (found.state === 'running') return { kind: 'idempotency_in_progress' }
    return { kind: 'replay', answer: found.answer }
  }

  /** Stores the first request's decided answer, in the transaction that decided it. */
  async record<O>(r: Repos, req: IdempotentRequest<O>, outcome: O, now: number): Promise<void> {
    await r.idempotency.save(req.scope, { fingerprint: this.fingerprint(req), state: 'done', answer: req.answer(outcome), createdAt: now }, null)
  }

  /** A send whose delivery is under way: `running`, holding the answer it gives once in force. */
  async reserve<O>(r: Repos, req: IdempotentRequest<O>, inForce: O, now: number, verificationSeq: number): Promise<void> {
    await r.idempotency.save(req.scope, { fingerprint: this.fingerprint(req), state: 'running', answer: req.answer(inForce), createdAt: now }, verificationSeq)
  }

  /**
   * Inside a transaction, after the per-key limit: runs `decide` unless the
   * key was used, and stores what it decided. Without a request, just runs it.
   */
  async once<O>(r: Repos, req: IdempotentRequest<O> | undefined, now: number, decide: () => Promise<O>): Promise<O | IdempotencyOutcome> {
    if (!req) return decide()
    const earlier = await this.check(r, req, now)
    if (earlier) return earlier
    const outcome = await decide()
    await this.record(r, req, outcome, now)
    return outcome
  }

  private fingerprint(req: IdempotentRequest<unknown>): Uint8Array {
    return this.hasher.digest(HASH_PURPOSE_REQUEST, req.canonicalBody)
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}
