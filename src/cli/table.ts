/**
 * Output for people: aligned tables and readable times. Scripts use `--json`,
 * whose times are ISO 8601 (see isoTime), never these strings.
 */

export type Cell = string | number

/**
 * Lays rows out under their headings, two spaces between columns. A column
 * whose cells are all numbers is right-aligned (amounts, balances, ids line up
 * by their last digit). Widths are terminal columns (Bun.stringWidth), so a
 * name in CJK or with accents does not shift the columns after it; control
 * characters are shown escaped, so no cell can break a line or move the cursor.
 */
export function formatTable(headings: string[], rows: Cell[][]): string {
  const numeric = headings.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'))
  const cells = [headings, ...rows.map((r) => headings.map((_, i) => printable(String(r[i] ?? ''))))]
  const widths = headings.map((_, i) => Math.max(...cells.map((r) => Bun.stringWidth(r[i]!))))
  const last = headings.length - 1
  return cells
    .map((r) =>
      r
        .map((c, i) => {
          const pad = ' '.repeat(widths[i]! - Bun.stringWidth(c))
          if (numeric[i]) return pad + c
          return i === last ? c : c + pad
        })
        .join('  '),
    )
    .join('\n')
    .concat('\n')
}

export function printTable(headings: string[], rows: Cell[][]): void {
  process.stdout.write(formatTable(headings, rows))
}

/**
 * A listing: its table, or when it has no row, one line that says so and
 * names the command that makes the first one (`none yet: otpd keys create …`),
 * instead of a bare heading. `--json` prints `[]` as before.
 */
export function printListing(headings: string[], rows: Cell[][], empty: string): void {
  process.stdout.write(rows.length === 0 ? `${empty}\n` : formatTable(headings, rows))
}

/** `none yet: NEXT`, or with a filter (`for account 'acme'`) `none for account 'acme' yet: NEXT`. */
export function noneYet(next: string, filter?: string): string {
  return filter ? `none ${filter} yet: ${next}` : `none yet: ${next}`
}

/** 2026-11-22 10:05:00 UTC; `absent` (such as "never") when there is no time. */
export function formatTime(ms: number | null, absent = '-'): string {
  return ms === null || ms === 0 ? absent : new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC'
}

/** The JSON form of a time: ISO 8601 in UTC, or null. */
export function isoTime(ms: number | null): string | null {
  return ms === null || ms === 0 ? null : new Date(ms).toISOString()
}

// C0, DEL and C1 controls, and the line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

function printable(s: string): string {
  return s.replace(CONTROL, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
