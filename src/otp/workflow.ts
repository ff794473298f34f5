/**
 * Workflows (docs/api.md#workflows): one verification, one code, tried over
 * up to three channels in turn. The send records every step with the
 * verification; the first starts at once, the next is due `channel_timeout`
 * seconds later unless a correct code comes first, and a step due at or
 * after `expires_at` never starts. What a later step delivers (its recipient,
 * the code, the send's text options) is sealed for the database.
 */
import { maskRecipient } from '../lib/mask.ts'
import { destinationOf } from '../lib/phone-country.ts'
import type { NewStep, Repos } from './ports/index.ts'
import type { SecretSealer } from './webhooks.ts'
import { type Channel, DEFAULT_CHANNEL_TIMEOUT, type SendInput, type Verification, type WorkflowStep } from './types.ts'

/** A `[[routing]]` table as `channel: "auto"` reads it (docs/delivery.md#routing-by-country). */
export interface AutoRoute {
  countries: readonly string[]
  workflow?: readonly Channel[]
  channelTimeout?: number
}

/**
 * The workflow `channel: "auto"` means for a phone number: the first table
 * naming its country that has a workflow, else the `*` table's; null when none has.
 */
export function autoWorkflowOf(routes: readonly AutoRoute[], phone: string): { channels: Channel[]; channelTimeout?: number } | null {
  const country = destinationOf(phone).country
  const route =
    routes.find((r) => r.workflow !== undefined && r.countries.includes(country)) ?? routes.find((r) => r.workflow !== undefined && r.countries.includes('*'))
  if (route?.workflow === undefined) return null
  return route.channelTimeout === undefined ? { channels: [...route.workflow] } : { channels: [...route.workflow], channelTimeout: route.channelTimeout }
}

/** What a step not yet started needs to deliver the verification's code, as it is sealed. */
export interface SealedStep {
  recipient: string
  code: string
  message?: string
  subject?: string
  locale?: string
  appHash?: string
}

/** The steps of a new verification `v` sent with `input.workflow`, written in the transaction that inserts it. */
export async function insertSteps(r: Repos, sealer: SecretSealer, input: SendInput, v: Verification, code: string): Promise<void> {
  const steps = input.workflow!
  const timeout = input.channelTimeout ?? DEFAULT_CHANNEL_TIMEOUT
  const due = v.createdAt + timeout * 1000
  const rows: NewStep[] = steps.map((s, i) => ({
    step: i,
    channel: s.channel,
    recipientMask: maskRecipient(s.recipient),
    // A test recipient's workflow delivers nothing, so it keeps nothing to deliver.
    sealed: i === 0 || v.testMode !== null ? null : sealer.seal(JSON.stringify(sealedStep(input, s, code))),
    startedAt: i === 0 ? v.createdAt : null,
    dueAt: i === 1 && due < v.expiresAt ? due : null,
  }))
  await r.workflows.insert(v.seq, timeout, rows)
}

function sealedStep(input: SendInput, s: WorkflowStep, code: string): SealedStep {
  const out: SealedStep = { recipient: s.recipient, code }
  if (input.message !== undefined) out.message = input.message
  if (input.subject !== undefined) out.subject = input.subject
  if (input.locale !== undefined) out.locale = input.locale
  if (input.appHash !== undefined) out.appHash = input.appHash
  return out
}
