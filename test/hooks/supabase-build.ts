/**
 * Supabase Auth's hook requests, built as its code builds them
 * (docs/integrations.md#supabase): the Send SMS and Send Email inputs
 * (internal/hooks/v0hooks, internal/mailer EmailData) marshalled once, and
 * each attempt signed by Standard Webhooks with a new webhook-id
 * (internal/hooks/hookshttp runHTTPHook), signed here with the
 * `standardwebhooks` package as Supabase's Go library signs.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

/** GOTRUE_HOOK_SEND_SMS_SECRETS as Supabase's dashboard writes it. */
export function supabaseSecret(): string {
  return `v1,whsec_${randomBytes(32).toString('base64')}`
}

function user(over: { email?: string; phone?: string; new_email?: string }): Record<string, unknown> {
  return {
    id: '8484b834-f29e-4af2-bf42-80644d154f76',
    aud: 'authenticated',
    role: 'authenticated',
    email: over.email ?? '',
    phone: over.phone ?? '',
    ...(over.new_email ? { new_email: over.new_email } : {}),
    app_metadata: { provider: over.phone ? 'phone' : 'email', providers: [over.phone ? 'phone' : 'email'] },
    user_metadata: {},
    identities: [],
    created_at: '2026-01-01T11:59:00Z',
    updated_at: '2026-01-01T11:59:00Z',
    is_anonymous: false,
  }
}

/** internal/hooks/v0hooks Metadata: one per input, so the same across its attempts. */
function metadata(name: string, at: number): Record<string, unknown> {
  return { uuid: randomUUID(), time: new Date(at).toISOString(), name, ip_address: '203.0.113.7' }
}

/** SendSMSInput: `phone` as Supabase stores it (digits, no `+`). */
export function sendSmsInput(phone: string, otp: string, at: number): string {
  return JSON.stringify({ metadata: metadata('send-sms', at), user: user({ phone }), sms: { otp, phone } })
}

export interface EmailData {
  token: string
  token_hash: string
  redirect_to: string
  email_action_type: string
  site_url: string
  token_new: string
  token_hash_new: string
  old_email?: string
  old_phone?: string
  provider?: string
  factor_type?: string
}

/** SendEmailInput with mailer.EmailData's fields in its order. */
export function sendEmailInput(email: string, data: Partial<EmailData>, at: number): string {
  const email_data = {
    token: '',
    token_hash: '',
    redirect_to: '',
    email_action_type: 'magiclink',
    site_url: 'https://abcdefgh.supabase.co/auth/v1',
    token_new: '',
    token_hash_new: '',
    old_email: '',
    old_phone: '',
    provider: '',
    factor_type: '',
    ...data,
  }
  return JSON.stringify({ metadata: metadata('send-email', at), user: user({ email }), email_data })
}

/** One attempt's headers: a new webhook-id, the time in seconds, `v1,<base64>` per secret joined by ", ". */
export function signedHeaders(secrets: string[], payload: string, at: number, id = randomUUID()): Record<string, string> {
  const signatures = secrets.map((s) => new Webhook(s.replace(/^v1,/, '')).sign(id, new Date(at), payload))
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at / 1000)),
    'webhook-signature': signatures.join(', '),
    'accept-encoding': 'identity',
  }
}
