/**
 * Incoming delivery receipts (docs/api.md#delivery-receipts), the vendor side: where
 * otpd asks a vendor to send them, and how a receipt's signature is checked
 * and its status read. Each provider type that has receipts gives a reader
 * (twilio-provider.ts, vonage-provider.ts, webhook-provider.ts).
 *
 * Every reader checks the signature before it trusts anything in the
 * receipt, and compares in constant time.
 */
import { timingSafeEqual } from 'node:crypto'
import type { ReceiptItem, ReceiptReader, ReceiptReading, ReceiptRequest } from '../otp/receipts.ts'

export type { ReceiptItem, ReceiptReader, ReceiptReading, ReceiptRequest }

/** The path receipts arrive at, under `server.public_url`. */
export const RECEIPTS_PATH = '/api/v1/receipts'

/** Where the vendor sends the receipts of provider `name`. */
export function receiptUrl(publicUrl: string, name: string): string {
  return `${publicUrl}${RECEIPTS_PATH}/${encodeURIComponent(name)}`
}

/** Constant-time equality of two strings (false when the lengths differ). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** A signed receipt's JSON body as an object, or the malformed reading its reader answers. */
export function receiptObject(req: ReceiptRequest): { ok: true; body: Record<string, unknown> } | { ok: false; reading: ReceiptReading } {
  let body: unknown
  try {
    body = JSON.parse(req.body)
  } catch {
    return { ok: false, reading: { kind: 'malformed', reason: 'json' } }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reading: { kind: 'malformed', reason: 'object' } }
  return { ok: true, body: body as Record<string, unknown> }
}

/** Form or JSON parameters as one string map (Vonage posts either, by the account's setting). */
export function receiptParams(req: ReceiptRequest): Map<string, string[]> {
  const out = new Map<string, string[]>()
  const add = (k: string, v: string) => out.set(k, [...(out.get(k) ?? []), v])
  const type = req.headers.get('content-type') ?? ''
  if (/^\s*application\/json\s*(;|$)/i.test(type)) {
    let parsed: unknown
    try {
      parsed = JSON.parse(req.body)
    } catch {
      return out
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') add(k, String(v))
    return out
  }
  for (const [k, v] of new URLSearchParams(req.body)) add(k, v)
  return out
}

/** The one value of a parameter; null when absent or given more than once. */
export function single(params: Map<string, string[]>, key: string): string | null {
  const v = params.get(key)
  return v?.length === 1 ? v[0]! : null
}
