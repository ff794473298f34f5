/**
 * Column values as either driver returns them, made one: the row mappers of
 * store/sql/ take a row from bun:sqlite or from Bun's PostgreSQL client.
 */

/** A number: bun:sqlite gives numbers; PostgreSQL bigints and counts arrive as strings (every stored value is within 2^53). */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v)
}

export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v)
}

/** A boolean column: SQLite stores 0/1, PostgreSQL gives true/false. */
export function bool(v: unknown): boolean {
  return v === true || v === 1
}

/** A blob: bun:sqlite gives a Uint8Array, PostgreSQL a Buffer, copied into a plain Uint8Array. */
export function bytes(v: unknown): Uint8Array {
  const b = v as Uint8Array
  return b.constructor === Uint8Array ? b : new Uint8Array(b)
}

export function bytesOrNull(v: unknown): Uint8Array | null {
  return v === null || v === undefined ? null : bytes(v)
}

/** A value bound to a placeholder: both drivers take each of these (bun:sqlite binds a boolean as 0/1). */
export type Param = string | number | boolean | Uint8Array | null

/** A row as a driver returns it: read through the functions above. */
export type Row = Record<string, unknown>

/** One time column of each row, ascending (statements that feed a window leave the ORDER BY to this). */
export function ascendingTimes(rows: Row[], column: string): number[] {
  return rows.map((r) => num(r[column])).sort((a, b) => a - b)
}
