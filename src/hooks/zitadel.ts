/**
 * Zitadel's HTTP SMS and HTTP email providers (docs/integrations.md#zitadel):
 * the JSON of its notification's `contextInfo`, `templateData` and `args`,
 * signed in `ZITADEL-Signature: t=<unix>,v1=<hex>` as its pkg/actions
 * signing computes it. Zitadel reads the status only: 2xx is sent, anything
 * else a failure its notification worker tries again later.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { HookAdapter, HookAuth, HookParse, HookRefusal, HookReply, HookRequest, HookSettings } from './adapter.ts'
import { emptyAccepted, jsonRefusalWith, RECIPIENT_AS_INVALID } from './gateway-kit.ts'
import { json, objectAt, stringAt } from './payload.ts'

/** pkg/actions DefaultTolerance. */
export const ZITADEL_TOLERANCE_SECONDS = 300

/** `t=<unix>` and each `v1=<hex>`, as Zitadel parses its own header; null when it is malformed. */
function parseHeader(header: string): { t: number; signatures: Buffer[] } | null {
  let t: number | null = null
  const signatures: Buffer[] = []
  for (const pair of header.split(',')) {
    const parts = pair.split('=')
    if (parts.length !== 2) return null
    const [k, v] = parts as [string, string]
    if (k === 't') {
      if (!/^-?\d{1,15}$/.test(v)) return null
      t = Number(v)
    } else if (k === 'v1' && /^([0-9a-fA-F]{2})+$/.test(v)) signatures.push(Buffer.from(v, 'hex'))
  }
  return t === null || signatures.length === 0 ? null : { t, signatures }
}

function authenticate(request: HookRequest, settings: HookSettings): HookAuth {
  if (!settings.secret) return { ok: false, reason: 'the signing key is not set' }
  const header = request.headers.get('zitadel-signature')
  if (header === null) return { ok: false, reason: 'ZITADEL-Signature missing' }
  const parsed = parseHeader(header)
  if (!parsed) return { ok: false, reason: 'ZITADEL-Signature is not t=<unix>,v1=<hex>' }
  // Zitadel refuses a timestamp older than its tolerance; one as far ahead is refused here too (docs/integrations.md#zitadel).
  if (Math.abs(request.now / 1000 - parsed.t) > ZITADEL_TOLERANCE_SECONDS) return { ok: false, reason: 'the signature is outside the 300-second tolerance' }
  const expected = createHmac('sha256', settings.secret).update(`${parsed.t}.`).update(request.rawBody).digest()
  const ok = parsed.signatures.some((s) => s.length === expected.length && timingSafeEqual(s, expected))
  return ok ? { ok: true } : { ok: false, reason: 'no v1 signature matches' }
}

/** Zitadel lower-cases the first letter of each argument (`Code` -> `code`, `OTP` -> `oTP`). */
function codeOf(args: Record<string, unknown>): string | undefined {
  return stringAt(args, 'code') ?? stringAt(args, 'oTP')
}

function parse(request: HookRequest): HookParse {
  const body = json(request.rawBody)
  const context = body && objectAt(body, 'contextInfo')
  if (!body || !context) return { ok: false, reason: 'no contextInfo: not a notification of a Zitadel HTTP provider' }
  const code = codeOf(objectAt(body, 'args') ?? {})
  if (!code) return { ok: false, reason: 'args has no code' }
  const phone = stringAt(context, 'recipientPhoneNumber')
  if (phone) return { ok: true, message: { channel: 'sms', recipient: phone, code } }
  const email = stringAt(context, 'recipientEmailAddress')
  if (!email) return { ok: false, reason: 'contextInfo names no recipient' }
  const link = stringAt(objectAt(body, 'templateData') ?? {}, 'URL')
  return { ok: true, message: { channel: 'email', recipient: email, code, link } }
}

function refused(refusal: HookRefusal): HookReply {
  return jsonRefusalWith(refusal, RECIPIENT_AS_INVALID[refusal.kind], { error: refusal.message })
}

export const zitadelHook: HookAdapter = {
  type: 'zitadel',
  authenticate,
  parse,
  accepted: emptyAccepted,
  refused,
}
