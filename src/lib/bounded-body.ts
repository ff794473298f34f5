/**
 * Reads at most a bound of an outbound answer's body (a vendor's, a webhook
 * provider's, an event receiver's): a body is read as a stream and, past the
 * bound, the rest is cancelled, which closes the connection, so a peer
 * answering hundreds of megabytes (or a small gzip that inflates to them)
 * costs otpd at most the bound (docs/delivery.md). What was read is the body
 * as far as it goes; the answer's status stands as it is.
 */

/** The most otpd reads of any answer to a request it makes: 64 KiB. */
export const MAX_ANSWER_BYTES = 64 * 1024

export interface BoundedBody {
  /** The first `max` bytes at most. */
  bytes: Uint8Array
  /** The body went on past `max`: the rest was not read. */
  truncated: boolean
}

export async function readAtMost(res: Response, max: number = MAX_ANSWER_BYTES): Promise<BoundedBody> {
  if (res.body === null) return { bytes: new Uint8Array(0), truncated: false }
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { bytes: joinChunks(chunks, size), truncated: false }
      if (size + value.byteLength > max) {
        chunks.push(value.subarray(0, max - size))
        size = max
        // The rest is never read: cancelling the stream closes the connection.
        await reader.cancel().catch(() => undefined)
        return { bytes: joinChunks(chunks, size), truncated: true }
      }
      chunks.push(value)
      size += value.byteLength
    }
  } finally {
    reader.releaseLock()
  }
}

/** The body's first `max` bytes as text (UTF-8; a character cut at the bound becomes U+FFFD). */
export async function readTextAtMost(res: Response, max: number = MAX_ANSWER_BYTES): Promise<BoundedBody & { text: string }> {
  const body = await readAtMost(res, max)
  return { ...body, text: new TextDecoder().decode(body.bytes) }
}

/** The chunks of a body read as a stream, `size` bytes in all, as one array (the one chunk itself when there is one). */
export function joinChunks(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}
