/**
 * Supabase Auth's Send SMS and Send Email hooks (docs/integrations.md#supabase):
 * Standard Webhooks signatures, the SMS's `sms.otp` and `sms.phone`, the
 * email's `email_data` with its confirmation link, and answers in the shape
 * Supabase reads (an `error` object with `http_code` and `message`, on a 200).
 */
import { Webhook } from 'standardwebhooks'
import type { HookAdapter, HookAuth, HookParse, HookRefusal, HookReply, HookRequest, HookSettings } from './adapter.ts'
import { bodyText, emptyAccepted, jsonRefusalWith, RECIPIENT_AS_INVALID, sameSecret } from './gateway-kit.ts'
import { json, objectAt, stringAt } from './payload.ts'

/** Standard Webhooks' tolerance, which Supabase signs within. */
export const SUPABASE_TOLERANCE_SECONDS = 5 * 60

/**
 * `v1,whsec_<base64>`, several joined by `|` while a secret is rotated, as
 * Supabase writes them; its asymmetric `v1a,` entries (which it does not sign
 * HTTP hooks with) are passed over. Null when no entry is a usable one.
 */
function webhooksOf(secret: string): Webhook[] | null {
  const hooks: Webhook[] = []
  for (const entry of secret.split('|').map((s) => s.trim())) {
    if (!entry.startsWith('v1,whsec_')) continue
    try {
      hooks.push(new Webhook(entry.slice(3)))
    } catch {
      return null
    }
  }
  return hooks.length === 0 ? null : hooks
}

/** The secret's shape, never its value, for `otpd config check`. */
function check(settings: HookSettings, table: Readonly<Record<string, unknown>>): string[] {
  const at = `hooks.${settings.name}.secret_env`
  if (table.secret_env === undefined) return [`${at} is missing: the variable holding the hook's secret (v1,whsec_...)`]
  if (settings.secret !== undefined && settings.secret !== '' && webhooksOf(settings.secret) === null) {
    return [`${at}: its variable does not hold a Standard Webhooks secret as Supabase gives it (v1,whsec_<base64>)`]
  }
  return []
}

/** `v1,<base64>` entries, separated by spaces (Supabase joins them with ", "). */
function signaturesOf(header: string): string[] {
  return header
    .split(' ')
    .map((t) => t.replace(/,$/, ''))
    .filter((t) => t.startsWith('v1,'))
    .map((t) => t.slice(3))
}

function authenticate(request: HookRequest, settings: HookSettings): HookAuth {
  const hooks = settings.secret === undefined ? null : webhooksOf(settings.secret)
  if (!hooks) return { ok: false, reason: 'the hook secret is not a Standard Webhooks secret (v1,whsec_...)' }
  const id = request.headers.get('webhook-id')
  const stamp = request.headers.get('webhook-timestamp')
  const signature = request.headers.get('webhook-signature')
  if (!id || !stamp || !signature) return { ok: false, reason: 'webhook-id, webhook-timestamp or webhook-signature missing' }
  if (!/^\d{1,12}$/.test(stamp)) return { ok: false, reason: 'webhook-timestamp is not a number' }
  const seconds = Number(stamp)
  if (Math.abs(request.now / 1000 - seconds) > SUPABASE_TOLERANCE_SECONDS) return { ok: false, reason: 'webhook-timestamp is outside the 5-minute tolerance' }
  const payload = bodyText(request.rawBody)
  if (payload === undefined) return { ok: false, reason: 'the body is not UTF-8' }
  const given = signaturesOf(signature)
  for (const wh of hooks) {
    const expected = wh.sign(id, new Date(seconds * 1000), payload).slice(3)
    if (given.some((g) => sameSecret(g, expected))) return { ok: true }
  }
  return { ok: false, reason: 'no webhook-signature matches' }
}

/**
 * The link Supabase's own mail carries: `{site_url}/verify?token={hash}&type={email_action_type}&redirect_to={redirect_to}`,
 * `hash` being `token_hash` (or, for the current address of a secure email change, `token_hash_new`).
 */
export function confirmationLink(data: Record<string, unknown>, hashField = 'token_hash'): string | undefined {
  const site = stringAt(data, 'site_url')
  const hash = stringAt(data, hashField)
  const type = stringAt(data, 'email_action_type')
  if (!site || !hash || !type) return undefined
  const redirect = stringAt(data, 'redirect_to') ?? ''
  return `${site.replace(/\/+$/, '')}/verify?token=${encodeURIComponent(hash)}&type=${encodeURIComponent(type)}&redirect_to=${encodeRedirect(redirect)}`
}

/** As Supabase's mailer does: a redirect holding `&`, `=` or `#` was not encoded by its caller, so it is encoded here. */
function encodeRedirect(url: string): string {
  return /[&=#]/.test(url) ? encodeURIComponent(url) : url
}

function parse(request: HookRequest): HookParse {
  const body = json(request.rawBody)
  if (!body) return { ok: false, reason: 'the body is not a JSON object' }
  const deliveryId = stringAt(objectAt(body, 'metadata') ?? {}, 'uuid')
  const sms = objectAt(body, 'sms')
  if (sms) {
    const phone = stringAt(sms, 'phone')
    const code = stringAt(sms, 'otp')
    if (!phone || !code) return { ok: false, reason: 'sms.phone or sms.otp missing' }
    return { ok: true, message: { channel: 'sms', recipient: phone.startsWith('+') ? phone : `+${phone}`, code, deliveryId } }
  }
  const data = objectAt(body, 'email_data')
  const user = objectAt(body, 'user')
  if (data && user) return parseEmail(data, user, deliveryId)
  return { ok: false, reason: 'neither sms nor email_data: not a Send SMS or Send Email hook' }
}

/**
 * A Send Email input, as internal/api/mail.go fills it: `token` to
 * `user.email`; for an email change, `token` to the new address
 * (`user.new_email`), or with secure email change `token` (and
 * `token_hash_new`) to the current address and `token_new` (and
 * `token_hash`) to the new one; a notification has no token.
 */
function parseEmail(data: Record<string, unknown>, user: Record<string, unknown>, deliveryId: string | undefined): HookParse {
  const email = stringAt(user, 'email')
  const token = stringAt(data, 'token')
  const tokenNew = stringAt(data, 'token_new')
  if (!token && !tokenNew) return { ok: false, skip: true, reason: `${stringAt(data, 'email_action_type') ?? 'an email'} holds no code` }
  if (stringAt(data, 'email_action_type') !== 'email_change') {
    if (!email || !token) return { ok: false, reason: 'user.email or email_data.token missing' }
    return { ok: true, message: { channel: 'email', recipient: email, code: token, link: confirmationLink(data), deliveryId } }
  }
  const newEmail = stringAt(user, 'new_email')
  if (token && tokenNew && email && newEmail) {
    const current = { channel: 'email', recipient: email, code: token, link: confirmationLink(data, 'token_hash_new'), deliveryId } as const
    return { ok: true, message: current, more: [{ channel: 'email', recipient: newEmail, code: tokenNew, link: confirmationLink(data), deliveryId }] }
  }
  const to = newEmail ?? email
  const code = token ?? tokenNew
  if (!to || !code) return { ok: false, reason: 'user.new_email missing for an email change' }
  return { ok: true, message: { channel: 'email', recipient: to, code, link: confirmationLink(data), deliveryId } }
}

/** Supabase's client gets `http_code` as its answer's status, per refusal (docs/integrations.md#supabase). */
function refused(refusal: HookRefusal): HookReply {
  const body = { error: { http_code: RECIPIENT_AS_INVALID[refusal.kind], message: refusal.message } }
  // A 401 (no Retry-After) is Supabase's "Hook requires authorization token"; every other refusal goes on a 200,
  // the only answer whose error object Supabase reads and passes to its user (docs/integrations.md#supabase).
  if (refusal.kind === 'unauthenticated') return jsonRefusalWith({ kind: refusal.kind, message: refusal.message }, 401, body)
  return jsonRefusalWith(refusal, 200, body)
}

export const supabaseHook: HookAdapter = {
  type: 'supabase',
  check,
  authenticate,
  parse,
  accepted: emptyAccepted,
  refused,
}
