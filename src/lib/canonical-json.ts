/**
 * Canonical JSON text: object keys sorted (by UTF-16 code units), no spacing.
 * Two bodies with the same fields and values, in any order and spacing, give
 * the same text (docs/api.md#idempotency-keys: an Idempotency-Key replay compares
 * bodies this way). Values are what JSON.parse made of them, so `1.0` and `1`,
 * or `"\u0041"` and `"A"`, are the same value.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>
    const keys = Object.keys(o).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}
