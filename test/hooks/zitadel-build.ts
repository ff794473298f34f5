/**
 * Zitadel's HTTP provider requests, built as its code builds them
 * (docs/integrations.md#zitadel): internal/notification/types generateSms /
 * generateEmail marshal `serializableData{ContextInfo, TemplateData, Args}`
 * (Go's encoding/json: struct fields in order, map keys sorted), with each
 * argument's first letter lower-cased; internal/notification/channels/webhook
 * signs it with pkg/actions ComputeSignatureHeader.
 */
import { createHmac } from 'node:crypto'

/** Go's json.Marshal of a map: keys sorted. */
function sorted(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** mapNotifyUserToArgs and the worker's `Code` (and `OTP` for an OTP), first letters lower-cased. */
function args(code: string, otp: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const a: Record<string, unknown> = {
    UserID: '312909075212468632',
    OrgID: '312909075211944344',
    UserName: 'ann@example.com',
    FirstName: 'Ann',
    LastName: 'Lee',
    NickName: '',
    DisplayName: 'Ann Lee',
    LastEmail: 'ann@example.com',
    VerifiedEmail: 'ann@example.com',
    LastPhone: '+41791234567',
    VerifiedPhone: '+41791234567',
    PreferredLoginName: 'ann@example.com',
    LoginName: 'ann@example.com',
    LoginNames: ['ann@example.com'],
    ChangeDate: '2026-01-01T11:00:00Z',
    CreationDate: '2026-01-01T10:00:00Z',
    Code: code,
    ...(otp ? { OTP: code, Origin: 'https://auth.example.com', Domain: 'auth.example.com', Expiry: 300_000_000_000 } : {}),
    ...extra,
  }
  return sorted(Object.fromEntries(Object.entries(a).map(([k, v]) => [k[0]!.toLowerCase() + k.slice(1), v])))
}

function templateData(text: string, url = ''): Record<string, unknown> {
  return {
    Title: 'Verify SMS OTP',
    PreHeader: 'Verify SMS OTP',
    Subject: 'Verify SMS OTP',
    Greeting: 'Hello Ann Lee,',
    Text: text,
    URL: url,
    ButtonText: '',
    PrimaryColor: '#5469d4',
    BackgroundColor: '#fafafa',
    FontColor: '#000000',
    LogoURL: '',
    FontURL: '',
    FontFaceFamily: '',
    FontFamily: 'Lato, Helvetica, Arial, sans-serif',
    IncludeFooter: false,
    FooterText: '',
  }
}

const provider = { id: '312909075214565784', description: 'otpd' }

/** An OTP SMS (user.human.otp.sms.code.added) to `phone`. */
export function zitadelSms(phone: string, code: string): string {
  return JSON.stringify({
    contextInfo: sorted({ recipientPhoneNumber: phone, eventType: 'user.human.otp.sms.code.added', provider }),
    templateData: templateData(`Your one-time password is ${code}. Use it within the next 5m0s.`),
    args: args(code, true),
  })
}

/** An email verification code (user.human.email.code.added) to `email`, with its verification link. */
export function zitadelEmail(email: string, code: string, url: string): string {
  return JSON.stringify({
    contextInfo: sorted({ recipientEmailAddress: email, eventType: 'user.human.email.code.added', provider }),
    templateData: templateData(`Please verify your email with the code ${code}.`, url),
    args: args(code, false),
  })
}

/** pkg/actions ComputeSignatureHeader: t=<unix>,v1=<hex of HMAC-SHA256(key, "<unix>.<payload>")>. */
export function zitadelSignature(payload: string, key: string, atMs: number): string {
  const t = Math.floor(atMs / 1000)
  return `t=${t},v1=${createHmac('sha256', key).update(`${t}.${payload}`).digest('hex')}`
}

/** The request's headers: Content-Type and the signature (Go writes the name `Zitadel-Signature`). */
export function zitadelHeaders(payload: string, key: string, atMs: number): Record<string, string> {
  return { 'content-type': 'application/json', 'Zitadel-Signature': zitadelSignature(payload, key, atMs) }
}
