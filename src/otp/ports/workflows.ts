/**
 * The steps of a verification sent with a workflow (docs/api.md#workflows):
 * one row per step, written with the verification. What a step not yet
 * started needs to deliver the same code (its recipient, the code, the
 * send's text options) is kept sealed (lib/secret-box.ts), never in clear.
 */
import type { Channel, DeliveryState } from '../types.ts'

/** Why a step ended (docs/api.md#workflows). */
export type StepEnd = 'delivery_failed' | 'undelivered' | 'timeout' | 'requested' | 'fraud_blocked' | 'no_credits'

export interface NewStep {
  step: number
  channel: Channel
  recipientMask: string
  /** What the step delivers, sealed; null for a step started at once (the first) or a test recipient's. */
  sealed: Uint8Array | null
  startedAt: number | null
  /** When the step starts unless a correct code comes first; null when none is due. */
  dueAt: number | null
}

export interface StepRow {
  step: number
  channel: Channel
  recipientMask: string
  /** The workflow's `channel_timeout`, in seconds. */
  channelTimeout: number
  provider: string | null
  delivery: DeliveryState | null
  startedAt: number | null
  endedAt: number | null
  endReason: StepEnd | null
  dueAt: number | null
}

export interface WorkflowStore {
  /** The steps of the new verification `seq`, in the transaction that inserts it. */
  insert(seq: number, channelTimeout: number, steps: NewStep[]): Promise<void>
  /** The steps of verification `seq`, in order; empty for a send without a workflow. */
  steps(seq: number): Promise<StepRow[]>
  /** The step current now (the last one started), or null for a send without a workflow. */
  currentStep(seq: number): Promise<{ step: number; channel: Channel } | null>
  /** Steps due at or before `now` (a read: the advance claims each), soonest first, at most `limit`. */
  due(now: number, limit: number): Promise<{ seq: number; id: string; step: number }[]>
  /**
   * Ends step `step` (the current one) with its reason and what its delivery
   * came to. Only a step not yet ended changes: false when another node or
   * request ended it first (PostgreSQL: it waits for that one's commit).
   */
  end(seq: number, step: number, e: { at: number; reason: StepEnd; provider: string | null; delivery: DeliveryState | null }): Promise<boolean>
  /** Starts a step not started nor ended: what it delivers, sealed (null for a test's), or undefined when it cannot start. */
  claim(seq: number, step: number, at: number): Promise<{ sealed: Uint8Array | null } | undefined>
  /** A claimed step that did not start after all (the fraud guard, no credit): ended with `reason`, never started. */
  skip(seq: number, step: number, at: number, reason: StepEnd): Promise<void>
  setDue(seq: number, step: number, at: number): Promise<void>
  /** Every step of `seq` not started stops being due and forgets what it would deliver (the verification ended). */
  close(seq: number): Promise<void>
  /** A receipt for a step that ended: its delivery's final status, on the step's row. */
  stepReceipt(seq: number, step: number, state: DeliveryState): Promise<boolean>
  /**
   * The verification row takes the started step: its channel, and (not for a
   * test recipient) a new delivery `sending`, with the SMS's size when it is one.
   */
  switchTo(seq: number, channel: Channel, at: number, sms: { encoding: string; segments: number } | null): Promise<void>
  /** The current step's delivery failed, no provider took it (the caller refunds it); the verification stays in use. False when it was settled first. */
  failCurrent(seq: number, provider: string | null, at: number): Promise<boolean>
  /** No step delivered and none is left: the verification goes out of use as a plain send's failed delivery does. */
  failVerification(seq: number): Promise<void>
}
