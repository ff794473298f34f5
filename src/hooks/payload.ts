/** Reading an identity server's JSON payload without trusting its shape. */

export type JsonObject = Record<string, unknown>

const decoder = new TextDecoder('utf-8', { fatal: true })

/** The body as a JSON object, or null. */
export function json(raw: Uint8Array): JsonObject | null {
  try {
    const v: unknown = JSON.parse(decoder.decode(raw))
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : null
  } catch {
    return null
  }
}

export function objectAt(o: JsonObject, key: string): JsonObject | undefined {
  const v = o[key]
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined
}

/** A non-empty string field, else undefined. */
export function stringAt(o: JsonObject, key: string): string | undefined {
  const v = o[key]
  return typeof v === 'string' && v !== '' ? v : undefined
}
