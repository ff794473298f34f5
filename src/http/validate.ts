/**
 * Field validation with the exact messages of docs/api.md#request-bodies-and-validation. Fields
 * are checked in the documented order and the first failure is reported; each
 * check is a compiled TypeBox schema from models.ts.
 */
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { isIP } from 'node:net'
import { Msg, workflowChannelMessage, workflowRecipientMessage, workflowRepeatMessage } from './error-texts.ts'
import { recipientIdentity } from '../otp/recipient-identity.ts'
import { MAX_WORKFLOW_STEPS, type SendInput, type VerifyInput, type WorkflowStep } from '../otp/types.ts'
import * as M from './models.ts'

const compile = (s: TSchema) => {
  const c = TypeCompiler.Compile(s)
  return (v: unknown) => c.Check(v)
}
const isChannel = compile(M.Channel)
const isPhone = compile(M.PhoneRecipient)
const isEmail = compile(M.EmailRecipient)
const isMessage = compile(M.Message)
const hasPlaceholder = compile(M.MessagePlaceholder)
const isSubject = compile(M.Subject)
const isExpiresIn = compile(M.ExpiresIn)
const isCode = compile(M.Code)
const isChannelTimeout = compile(M.ChannelTimeout)

export type Validated<T> = { ok: true; value: T } | { ok: false; error: string }

const fail = (error: string) => ({ ok: false, error }) as const

/** Optional fields: absent is fine; present (null included) must pass every rule. */
function optional(v: unknown, rules: [(v: unknown) => boolean, string][]): string | null {
  if (v === undefined) return null
  for (const [check, message] of rules) if (!check(v)) return message
  return null
}

/** The contract's message when `recipient` does not fit `channel` (also used by `otpd send-test`). */
export function recipientProblem(channel: SendInput['channel'], recipient: unknown): string | null {
  if (channel === 'email') return isEmail(recipient) ? null : Msg.recipientEmail
  return isPhone(recipient) ? null : Msg.recipientPhone
}

const APP_HASH = /^[A-Za-z0-9+/]{11}$/

/**
 * `resolveLocale` maps a request's `locale` to a language of the message
 * catalogue (otp/messages/catalogue.ts resolve), null when it has none; without it
 * every `locale` is refused.
 */
export function validateSend(
  body: Record<string, unknown>,
  resolveLocale: (tag: string) => string | null = () => null,
  resolveAuto: AutoResolver = () => null,
): Validated<SendInput> {
  const { message, subject, expires_in, code } = body
  // A plain send pays one look-up for workflows (docs/api.md#workflows).
  const route = body.workflow !== undefined ? workflowRoute(body) : body.channel === 'auto' ? autoRoute(body.recipient, resolveAuto) : plainRoute(body)
  if (!route.ok) return route
  const problem =
    optional(message, [
      [isMessage, Msg.message],
      [hasPlaceholder, Msg.messagePlaceholder],
    ]) ??
    optional(subject, [[isSubject, Msg.subject]]) ??
    optional(expires_in, [[isExpiresIn, Msg.expiresIn]]) ??
    optional(code, [[isCode, Msg.code]]) ??
    optional(body.ip, [[(v) => canonicalIp(v) !== null, Msg.ip]])
  if (problem) return fail(problem)
  let locale: string | undefined
  if (body.locale !== undefined) {
    const known = typeof body.locale === 'string' ? resolveLocale(body.locale) : null
    if (known === null) return fail(Msg.locale)
    locale = known
  }
  const appHash = body.app_hash
  if (appHash !== undefined && (typeof appHash !== 'string' || !APP_HASH.test(appHash))) return fail(Msg.appHash)
  const timeout = body.channel_timeout
  if (timeout !== undefined) {
    if (route.value.workflow === undefined) return fail(Msg.channelTimeoutAlone)
    if (!isChannelTimeout(timeout)) return fail(Msg.channelTimeout)
    route.value.channelTimeout = timeout as number
  }
  return {
    ok: true,
    value: {
      ...route.value,
      message: message as string | undefined,
      subject: subject as string | undefined,
      expiresIn: expires_in as number | undefined,
      code: code as string | undefined,
      ip: body.ip === undefined ? undefined : canonicalIp(body.ip)!,
      locale,
      appHash: appHash as string | undefined,
    },
  }
}

type Route = Pick<SendInput, 'channel' | 'recipient' | 'workflow' | 'channelTimeout'>

/** The workflow `channel: "auto"` means for a phone number (otp/workflow.ts autoWorkflowOf), null when none. */
export type AutoResolver = (phone: string) => { channels: SendInput['channel'][]; channelTimeout?: number } | null

/** `channel: "auto"`: the operator's workflow for the number's country, every step to that number. */
function autoRoute(recipient: unknown, resolveAuto: AutoResolver): Validated<Route> {
  if (!isPhone(recipient)) return fail(Msg.recipientPhone)
  const phone = recipient as string
  const found = resolveAuto(phone)
  if (found === null) return fail(Msg.autoUnrouted)
  const workflow = found.channels.map((channel) => ({ channel, recipient: phone }))
  const value: Route = { channel: workflow[0]!.channel, recipient: phone, workflow }
  if (found.channelTimeout !== undefined) value.channelTimeout = found.channelTimeout
  return { ok: true, value }
}

/** `channel` and `recipient` as they always were. */
function plainRoute(body: Record<string, unknown>): Validated<Route> {
  const { channel, recipient } = body
  if (!isChannel(channel)) return fail(Msg.channel)
  const ch = channel as SendInput['channel']
  const wrongRecipient = recipientProblem(ch, recipient)
  if (wrongRecipient) return fail(wrongRecipient)
  return { ok: true, value: { channel: ch, recipient: recipient as string } }
}

/**
 * `workflow` (docs/api.md#workflows): 1 to 3 steps, each a channel and the
 * recipient it goes to (its own, else the send's), none repeating another;
 * the send's `channel` and `recipient` become the first step's.
 */
function workflowRoute(body: Record<string, unknown>): Validated<Route> {
  if (body.channel !== undefined) return fail(Msg.channelAndWorkflow)
  const list = body.workflow
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_WORKFLOW_STEPS) return fail(Msg.workflow)
  const steps: WorkflowStep[] = []
  const seen: string[] = []
  for (const [i, item] of list.entries()) {
    const step = (typeof item === 'object' && item !== null && !Array.isArray(item) ? item : {}) as Record<string, unknown>
    if (!isChannel(step.channel)) return fail(workflowChannelMessage(i + 1))
    const channel = step.channel as SendInput['channel']
    const recipient = step.recipient === undefined ? body.recipient : step.recipient
    if (recipientProblem(channel, recipient)) return fail(workflowRecipientMessage(i + 1, channel))
    const identity = `${channel}:${recipientIdentity(channel, recipient as string)}`
    const earlier = seen.indexOf(identity)
    if (earlier >= 0) return fail(workflowRepeatMessage(i + 1, earlier + 1))
    seen.push(identity)
    steps.push({ channel, recipient: recipient as string })
  }
  const first = steps[0]!
  return { ok: true, value: { channel: first.channel, recipient: first.recipient, workflow: steps } }
}

/**
 * The canonical text of an end user's IP address (fraud guard rule 2), or null
 * when it is none: IPv4 dotted decimal; IPv6 as RFC 5952 writes it (lower
 * case, zeros compressed), through the URL parser; an IPv4-mapped IPv6
 * address as its IPv4 address, since it is the same end user. A zone
 * (`fe80::1%eth0`) names an interface of the caller, not an end user: refused.
 * The fraud guard then counts an IPv6 address as its /64 (otp/fraud.ts ipScope).
 */
export function canonicalIp(v: unknown): string | null {
  if (typeof v !== 'string' || v.length > 64) return null
  const kind = isIP(v)
  if (kind === 4) return v
  if (kind !== 6 || v.includes('%')) return null
  let host: string
  try {
    host = new URL(`http://[${v}]/`).hostname.slice(1, -1)
  } catch {
    return null
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host)
  if (!mapped) return host
  const hi = parseInt(mapped[1]!, 16)
  const lo = parseInt(mapped[2]!, 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

export function validateVerify(body: Record<string, unknown>): Validated<VerifyInput> {
  const { verification_id, code } = body
  if (typeof verification_id !== 'string') return fail(Msg.verificationIdRequired)
  // A required field given as null counts as missing.
  if (code === undefined || code === null) return fail(Msg.codeRequired)
  if (!isCode(code)) return fail(Msg.code)
  return { ok: true, value: { verificationId: verification_id, code: code as string } }
}
