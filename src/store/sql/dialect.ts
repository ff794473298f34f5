/**
 * The SQL the two engines share (store/sql/): a statement that carries a rule is
 * written once, with `$1...$n` placeholders; where the dialects differ in a
 * fragment it is built from a `Dialect` once per engine, never per call. A
 * statement an engine keeps to itself says why where it is written: a lock, a
 * `RETURNING` that saves PostgreSQL a round trip, a sequence, or a SQLite
 * planner workaround.
 */

export interface Dialect {
  /**
   * A boolean column as a condition. SQLite stores 0/1, and its partial
   * indexes (`WHERE counted = 1`) serve a query only when it says `= 1`;
   * PostgreSQL stores a boolean, which is a condition by itself.
   */
  isTrue(column: string): string
  /** Whether the text `part` occurs in `text`: SQLite's instr(), PostgreSQL's strpos(). */
  contains(text: string, part: string): string
  /** The larger of two values: SQLite's max() of two arguments, PostgreSQL's greatest(). */
  greatest(a: string, b: string): string
  /** The smaller of two values: SQLite's min() of two arguments, PostgreSQL's least(). */
  least(a: string, b: string): string
  /** A text column in byte order: SQLite's default (BINARY); PostgreSQL sorts by the locale unless told `COLLATE "C"`. */
  bytewise(column: string): string
  /**
   * Events of the verification `v` (the event alias `e`): SQLite's events
   * keep the verification's row number as well, and are found through the
   * index on (verification_seq, verification_id); PostgreSQL's through the
   * unique index on (verification_id, sequence).
   */
  eventOf(e: string, v: string): string
  /** An event row's verification row number, as a column expression: SQLite keeps it (`verification_seq`), PostgreSQL does not (NULL). */
  eventVerificationSeq: string
  /** The integers of a JSON array text bound to `param`, as a subquery of one column `value` (`x IN (...)`): one statement text for any number of them. */
  intList(param: string): string
  /**
   * The balance of the `accounts` row a query reads, as a column expression:
   * SQLite keeps it in the row; PostgreSQL spreads it over rows of
   * `account_balances` (store/pg/balances.ts).
   */
  accountBalance: string
}

export const SQLITE: Dialect = {
  isTrue: (column) => `${column} = 1`,
  contains: (text, part) => `instr(${text}, ${part}) > 0`,
  greatest: (a, b) => `max(${a}, ${b})`,
  least: (a, b) => `min(${a}, ${b})`,
  bytewise: (column) => column,
  eventVerificationSeq: 'verification_seq',
  eventOf: (e, v) => `${e}.verification_seq = ${v}.seq AND ${e}.verification_id = ${v}.id`,
  intList: (param) => `SELECT value FROM json_each(${param})`,
  accountBalance: 'accounts.balance',
}

export const POSTGRES: Dialect = {
  isTrue: (column) => column,
  contains: (text, part) => `strpos(${text}, ${part}) > 0`,
  greatest: (a, b) => `greatest(${a}, ${b})`,
  least: (a, b) => `least(${a}, ${b})`,
  bytewise: (column) => `${column} COLLATE "C"`,
  eventVerificationSeq: 'NULL',
  eventOf: (e, v) => `${e}.verification_id = ${v}.id`,
  intList: (param) => `SELECT jsonb_array_elements_text(CAST(CAST(${param} AS text) AS jsonb))::bigint AS value`,
  accountBalance: '(SELECT coalesce(sum(b.balance), 0) FROM account_balances b WHERE b.account_id = accounts.id)',
}

/**
 * A shared text for bun:sqlite: `$1` becomes `?1`. SQLite reads `$1` as a
 * named parameter, numbered in order of first appearance, which would bind
 * `SET a = $2 WHERE b = $1` backwards; `?1` is the first parameter wherever
 * it appears. Called once per statement, where it is prepared.
 */
export function forSqlite(text: string): string {
  return text.replace(/\$(\d+)/g, '?$1')
}
