/**
 * One HTTP POST to a vendor, for the HTTP providers. Errors say which host
 * failed and how (refused, timed out, status and vendor error code), never
 * the body, which may quote the recipient. At most 64 KiB of the answer is
 * read (lib/bounded-body.ts): a longer one counts by its status, its body cut
 * there (so not JSON).
 */
import { readTextAtMost } from '../lib/bounded-body.ts'

export interface VendorResponse {
  status: number
  /** The parsed JSON body, or undefined when it is not JSON. */
  json: unknown
}

export async function post(url: string, init: { headers: Record<string, string>; body: string }, signal: AbortSignal): Promise<VendorResponse> {
  const origin = new URL(url).origin
  let res: Response
  try {
    res = await fetch(url, { method: 'POST', headers: init.headers, body: init.body, signal, redirect: 'manual' })
  } catch (err) {
    if (signal.aborted) throw new Error(`${origin} did not answer in time`)
    const code = (err as { code?: unknown }).code
    throw new Error(`cannot reach ${origin}${typeof code === 'string' ? ` (${code})` : ''}`)
  }
  const { text, truncated } = await readTextAtMost(res).catch(() => ({ text: '', truncated: false }))
  let json: unknown
  try {
    json = truncated ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, json }
}

/** A vendor's numeric or short error code from its JSON body, for logs. */
export function vendorCode(json: unknown, field: string): string | undefined {
  const v = (json as Record<string, unknown> | undefined)?.[field]
  return typeof v === 'number' || (typeof v === 'string' && /^[\w.-]{1,40}$/.test(v)) ? String(v) : undefined
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
}

export function xmlEscape(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)
}
