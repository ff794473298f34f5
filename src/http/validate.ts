/**
 * Field validation with the exact messages of DECISIONS.md section 3. Fields
 * are checked in the documented order and the first failure is reported; each
 * check is a compiled TypeBox schema from models.ts.
 */
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Msg } from './messages.ts'
import type { SendInput, VerifyInput } from '../otp/types.ts'
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

export type Validated<T> = { ok: true; value: T } | { ok: false; error: string }

const fail = (error: string) => ({ ok: false, error }) as const

/** Optional fields: absent is fine; present (null included) must pass every rule. */
function optional(v: unknown, rules: [(v: unknown) => boolean, string][]): string | null {
  if (v === undefined) return null
  for (const [check, message] of rules) if (!check(v)) return message
  return null
}

/** The spec's message when `recipient` does not fit `channel` (also used by `otpd send-test`). */
export function recipientProblem(channel: SendInput['channel'], recipient: unknown): string | null {
  if (channel === 'email') return isEmail(recipient) ? null : Msg.recipientEmail
  return isPhone(recipient) ? null : Msg.recipientPhone
}

export function validateSend(body: Record<string, unknown>): Validated<SendInput> {
  const { channel, recipient, message, subject, expires_in, code } = body
  if (!isChannel(channel)) return fail(Msg.channel)
  const ch = channel as SendInput['channel']
  const wrongRecipient = recipientProblem(ch, recipient)
  if (wrongRecipient) return fail(wrongRecipient)
  const problem =
    optional(message, [
      [isMessage, Msg.message],
      [hasPlaceholder, Msg.messagePlaceholder],
    ]) ??
    optional(subject, [[isSubject, Msg.subject]]) ??
    optional(expires_in, [[isExpiresIn, Msg.expiresIn]]) ??
    optional(code, [[isCode, Msg.code]])
  if (problem) return fail(problem)
  return {
    ok: true,
    value: {
      channel: ch,
      recipient: recipient as string,
      message: message as string | undefined,
      subject: subject as string | undefined,
      expiresIn: expires_in as number | undefined,
      code: code as string | undefined,
    },
  }
}

export function validateVerify(body: Record<string, unknown>): Validated<VerifyInput> {
  const { verification_id, code } = body
  if (typeof verification_id !== 'string') return fail(Msg.verificationIdRequired)
  // A required field given as null counts as missing.
  if (code === undefined || code === null) return fail(Msg.codeRequired)
  if (!isCode(code)) return fail(Msg.code)
  return { ok: true, value: { verificationId: verification_id, code: code as string } }
}
