/**
 * Reads a JSON request body with a hard size cap (docs/api.md#request-bodies-and-validation). The
 * body is read only after authentication, so an anonymous client cannot make
 * the server buffer anything.
 */
import { joinChunks } from '../lib/bounded-body.ts'
import { Msg } from './error-texts.ts'

export const MAX_BODY_BYTES = 16 * 1024

export type BodyResult = { ok: true; body: Record<string, unknown> } | { ok: false; status: 400 | 413; error: string }

const decoder = new TextDecoder('utf-8', { fatal: true })

export function isJsonContentType(header: string | null): boolean {
  if (header === null) return false
  if (header === 'application/json') return true // what nearly every client sends
  const semi = header.indexOf(';')
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase() === 'application/json'
}

export async function readJsonBody(request: Request): Promise<BodyResult> {
  if (!isJsonContentType(request.headers.get('content-type'))) return { ok: false, status: 400, error: Msg.contentType }
  const bytes = await readBytes(request)
  return 'ok' in bytes ? bytes : parseObject(bytes)
}

/**
 * A body that may be left out (cancel, docs/api.md#verification-status): an empty
 * body (no bytes, or only JSON whitespace) is `{}` whatever its Content-Type;
 * any other body follows readJsonBody's rules (JSON Content-Type, valid JSON,
 * an object), with the same messages.
 */
export async function readOptionalJsonBody(request: Request): Promise<BodyResult> {
  const bytes = await readBytes(request)
  if ('ok' in bytes) return bytes
  if (bytes.every((b) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d)) return { ok: true, body: {} }
  if (!isJsonContentType(request.headers.get('content-type'))) return { ok: false, status: 400, error: Msg.contentType }
  return parseObject(bytes)
}

/** The body's bytes, at most MAX_BODY_BYTES, or the 413 (or 400 for a body cut off). */
export async function readBytes(request: Request, max = MAX_BODY_BYTES): Promise<Uint8Array | (BodyResult & { ok: false })> {
  const length = request.headers.get('content-length')
  const declared = Number(length ?? 0)
  if (declared > max) return { ok: false, status: 413, error: Msg.bodyTooLarge }
  // With a Content-Length the server reads exactly that many bytes, so reading
  // the whole body at once is bounded (and much cheaper than a stream reader);
  // a chunked body is read chunk by chunk and cut at the cap.
  let bytes: Uint8Array | null
  try {
    bytes = length !== null ? new Uint8Array(await request.arrayBuffer()) : await readCapped(request, max)
  } catch {
    // The client went away mid-body (or sent a broken chunked body): nobody is
    // there to read an answer, and it is not a server fault worth a 500 and an error log.
    return { ok: false, status: 400, error: Msg.invalidJson }
  }
  if (bytes === null || bytes.byteLength > max) return { ok: false, status: 413, error: Msg.bodyTooLarge }
  return bytes
}

function parseObject(bytes: Uint8Array): BodyResult {
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(bytes))
  } catch {
    return { ok: false, status: 400, error: Msg.invalidJson }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, status: 400, error: Msg.notObject }
  return { ok: true, body: parsed as Record<string, unknown> }
}

/** The body's bytes, or null as soon as it exceeds `max` (the rest is not read). */
export async function readCapped(request: Request, max: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  return joinChunks(chunks, size)
}
