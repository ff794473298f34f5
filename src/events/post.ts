/**
 * One POST of an event to an endpoint. Any 2xx is success; anything else
 * (another status, a redirect, no answer within the timeout, a refused
 * connection) is a failure described in one short line, never with the body.
 * The body is read to free the connection, but at most 64 KiB of it
 * (lib/bounded-body.ts): past that the connection is closed.
 */
import { readAtMost } from '../lib/bounded-body.ts'

export const EVENT_TIMEOUT_MS = 10_000

export type PostResult = { ok: true; status: number } | { ok: false; error: string }

export type PostEvent = (url: string, headers: Record<string, string>, body: string) => Promise<PostResult>

export const postEvent: PostEvent = async (url, headers, body) => {
  const signal = AbortSignal.timeout(EVENT_TIMEOUT_MS)
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal, redirect: 'manual' })
    await readAtMost(res).catch(() => undefined)
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status }
    return { ok: false, error: `HTTP ${res.status}` }
  } catch (err) {
    if (signal.aborted) return { ok: false, error: `no answer within ${EVENT_TIMEOUT_MS / 1000} s` }
    const code = (err as { code?: unknown }).code
    return { ok: false, error: `cannot reach ${new URL(url).host}${typeof code === 'string' ? ` (${code})` : ''}` }
  }
}
