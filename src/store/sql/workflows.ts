/** The steps of workflow sends (otp/ports/workflows.ts) for both engines, over a `Runner`. */
import type { NewStep, StepEnd, StepRow, WorkflowStore } from '../../otp/ports/index.ts'
import type { Channel, DeliveryState } from '../../otp/types.ts'
import type { Runner } from './stats-store.ts'
import { num, numOrNull, type Row } from './values.ts'

export const WORKFLOW_SQL = {
  insert: `INSERT INTO verification_steps (verification_seq, step, channel, recipient_mask, channel_timeout, sealed, started_at, due_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  steps: `SELECT step, channel, recipient_mask, channel_timeout, provider, delivery, started_at, ended_at, end_reason, due_at
    FROM verification_steps WHERE verification_seq = $1 ORDER BY step`,
  // Skipped steps never started: the last started one is current.
  currentStep: `SELECT step, channel FROM verification_steps WHERE verification_seq = $1 AND started_at IS NOT NULL ORDER BY step DESC LIMIT 1`,
  due: `SELECT s.verification_seq, s.step, v.id FROM verification_steps s JOIN verifications v ON v.seq = s.verification_seq
    WHERE s.due_at IS NOT NULL AND s.due_at <= $1 ORDER BY s.due_at LIMIT $2`,
  // Only a step not yet ended: of two nodes ending it, the second changes nothing (PostgreSQL re-reads the row once the first commits).
  end: `UPDATE verification_steps SET ended_at = $3, end_reason = $4, provider = $5, delivery = $6, due_at = NULL
    WHERE verification_seq = $1 AND step = $2 AND ended_at IS NULL RETURNING step`,
  claim: `UPDATE verification_steps SET started_at = $3, due_at = NULL
    WHERE verification_seq = $1 AND step = $2 AND started_at IS NULL AND ended_at IS NULL RETURNING sealed`,
  forget: 'UPDATE verification_steps SET sealed = NULL WHERE verification_seq = $1 AND step = $2',
  skip: `UPDATE verification_steps SET started_at = NULL, ended_at = $3, end_reason = $4, sealed = NULL, due_at = NULL
    WHERE verification_seq = $1 AND step = $2`,
  setDue: 'UPDATE verification_steps SET due_at = $3 WHERE verification_seq = $1 AND step = $2 AND started_at IS NULL AND ended_at IS NULL',
  close: 'UPDATE verification_steps SET due_at = NULL, sealed = NULL WHERE verification_seq = $1 AND started_at IS NULL',
  // A final status stays, as on the verification's row.
  stepReceipt: `UPDATE verification_steps SET delivery = $3
    WHERE verification_seq = $1 AND step = $2 AND delivery IN ('sending', 'accepted', 'unknown') RETURNING step`,
  switchTo: `UPDATE verifications SET channel = $2,
      delivery = CASE WHEN test_mode IS NULL THEN 'sending' ELSE NULL END,
      delivery_updated_at = CASE WHEN test_mode IS NULL THEN CAST($3 AS bigint) ELSE NULL END,
      delivery_provider = NULL, delivery_ref = NULL, delivery_language = NULL, delivery_error_code = NULL, delivery_error_title = NULL,
      sms_encoding = $4, sms_segments = $5
    WHERE seq = $1`,
  failCurrent: `UPDATE verifications SET delivery = 'failed', delivery_provider = $2, delivery_updated_at = $3
    WHERE seq = $1 AND delivery = 'sending' RETURNING seq`,
  failVerification: "UPDATE verifications SET status = 'failed' WHERE seq = $1 AND status = 'active'",
} as const

function toStep(r: Row): StepRow {
  return {
    step: num(r.step),
    channel: r.channel as Channel,
    recipientMask: r.recipient_mask as string,
    channelTimeout: num(r.channel_timeout),
    provider: (r.provider as string | null) ?? null,
    delivery: (r.delivery as DeliveryState | null) ?? null,
    startedAt: numOrNull(r.started_at),
    endedAt: numOrNull(r.ended_at),
    endReason: (r.end_reason as StepEnd | null) ?? null,
    dueAt: numOrNull(r.due_at),
  }
}

export class SqlWorkflowStore implements WorkflowStore {
  constructor(private readonly db: Runner) {}

  async insert(seq: number, channelTimeout: number, steps: NewStep[]): Promise<void> {
    for (const s of steps) {
      await this.db.run(WORKFLOW_SQL.insert, [seq, s.step, s.channel, s.recipientMask, channelTimeout, s.sealed, s.startedAt, s.dueAt])
    }
  }

  async steps(seq: number): Promise<StepRow[]> {
    return (await this.db.all(WORKFLOW_SQL.steps, [seq])).map(toStep)
  }

  async currentStep(seq: number): Promise<{ step: number; channel: Channel } | null> {
    const [row] = await this.db.all(WORKFLOW_SQL.currentStep, [seq])
    return row === undefined ? null : { step: num(row.step), channel: row.channel as Channel }
  }

  async due(now: number, limit: number): Promise<{ seq: number; id: string; step: number }[]> {
    return (await this.db.all(WORKFLOW_SQL.due, [now, limit])).map((r) => ({ seq: num(r.verification_seq), id: r.id as string, step: num(r.step) }))
  }

  async end(seq: number, step: number, e: { at: number; reason: StepEnd; provider: string | null; delivery: DeliveryState | null }): Promise<boolean> {
    return (await this.db.all(WORKFLOW_SQL.end, [seq, step, e.at, e.reason, e.provider, e.delivery])).length === 1
  }

  async claim(seq: number, step: number, at: number): Promise<{ sealed: Uint8Array | null } | undefined> {
    const [row] = await this.db.all(WORKFLOW_SQL.claim, [seq, step, at])
    if (row === undefined) return undefined
    // Opened by the caller in this transaction: a started step keeps nothing sealed.
    await this.db.run(WORKFLOW_SQL.forget, [seq, step])
    return { sealed: row.sealed === null ? null : new Uint8Array(row.sealed as Uint8Array) }
  }

  skip(seq: number, step: number, at: number, reason: StepEnd): Promise<void> {
    return this.db.run(WORKFLOW_SQL.skip, [seq, step, at, reason])
  }

  setDue(seq: number, step: number, at: number): Promise<void> {
    return this.db.run(WORKFLOW_SQL.setDue, [seq, step, at])
  }

  close(seq: number): Promise<void> {
    return this.db.run(WORKFLOW_SQL.close, [seq])
  }

  async stepReceipt(seq: number, step: number, state: DeliveryState): Promise<boolean> {
    return (await this.db.all(WORKFLOW_SQL.stepReceipt, [seq, step, state])).length === 1
  }

  switchTo(seq: number, channel: Channel, at: number, sms: { encoding: string; segments: number } | null): Promise<void> {
    return this.db.run(WORKFLOW_SQL.switchTo, [seq, channel, at, sms?.encoding ?? null, sms?.segments ?? null])
  }

  async failCurrent(seq: number, provider: string | null, at: number): Promise<boolean> {
    return (await this.db.all(WORKFLOW_SQL.failCurrent, [seq, provider, at])).length === 1
  }

  failVerification(seq: number): Promise<void> {
    return this.db.run(WORKFLOW_SQL.failVerification, [seq])
  }
}
