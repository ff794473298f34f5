/**
 * The console's rollups (docs/console.md#performance): counts per minute,
 * hour and day of real sends, by account, channel, country and provider,
 * kept in `console_rollups` so that no console page aggregates the
 * verifications table, and nothing is written for them on the send or
 * verify path.
 *
 * How: three tables grow with every change that moves a count: a new
 * verification (its row), an event (delivered, approved, failed...) and a
 * refund (the ledger). The rollup follows each by its row number from a
 * cursor, in bounded batches, and recounts what those rows concern from the
 * verifications themselves (verifications_created): in the last hours, only
 * the minutes of those verifications (an hour is then the sum of its minute
 * rows, so a busy hour is not scanned again on every run); an older hour
 * whole. Only the rows that differ are written. A recount is idempotent, so seeing a change twice costs time,
 * never exactness; `send.blocked` events are counted once each, in the
 * transaction that moves the cursor past them.
 *
 * Exact after catch-up, across restarts and nodes: the cursor moves by a
 * compare-and-set in the transaction that writes what was read with it, so
 * a second process running the same batch has its write refused. Sources are
 * read before the verifications are counted, so a change committed between
 * the two is counted now and again later, never missed. On PostgreSQL
 * numbers come from sequences and can commit out of order: a number passed
 * while absent is a gap, looked for again on each run until it appears (it
 * is counted then) or is older than GAP_HOLD_MS (its transaction rolled back,
 * or the number went to a send refused after drawing it: otp/send.ts). On
 * SQLite one writer commits numbers in the order drawn, so a number passed
 * while absent never comes, and no gap is kept.
 */
import type { Clock } from '../lib/clock.ts'
import { ROLLUP_COUNTS, SPAN, type PrefixRow, type RefusalRow, type RollupRow, type Span } from './ports/stats.ts'
import type { Repos, RollupSource, SourceRow, Storage } from './ports/index.ts'

const { minute: MINUTE, hour: HOUR, day: DAY } = SPAN
/** Spans summed from hour rows (the 7 d and 30 d periods read them). */
const COARSE: Span[] = [SPAN.quarterDay, SPAN.day]
/** The prefix sums cover the 24 hours holding `now`. */
const PREFIX_HOURS = 24
const SOURCES: RollupSource[] = ['verifications', 'events', 'ledger']
/** A transaction holds its numbers at most this long before it commits (else they were rolled back). */
export const GAP_HOLD_MS = 10 * 60_000
/** Gaps recorded per batch at most: a larger hole is rows deleted (the retention sweep), not transactions in flight. */
const MAX_GAPS = 1000
/** Minute rows are kept this long: the 1 h period reads them. */
export const MINUTES_KEPT_MS = 3 * HOUR
/** Refusal rows (per minute) are kept this long: the 30 d period reads them. */
export const REFUSALS_KEPT_MS = 35 * DAY

/**
 * Rows read per source and run. Each run recounts the hours its rows touch, so
 * under a heavy load a larger batch means far fewer recounts of the same busy
 * hour (measured with scripts/bench: see docs/console.md#performance).
 */
export const DEFAULT_BATCH = 50_000

export interface RollupDeps {
  storage: Storage
  clock: Clock
  /** The row number a verification id names (lib/verification-id.ts), null if none. */
  seqOf(id: string): number | null
  /** `retention.days`: hours older than this are never recounted (the sweep may have taken their verifications). */
  retentionDays(): number
  /** Rows read per source and run. */
  batch?: number
  /** Whether a row can commit after one with a higher number (PostgreSQL's sequences): only then are gaps kept. */
  lateRows: boolean
}

/** What one batch reads (planBatch's options). */
export interface PlanOptions {
  now: number
  batch: number
  retentionDays: number
  /** RollupDeps.lateRows. */
  lateRows: boolean
}

/** One batch's reads, made elsewhere (a worker thread with its own connection: store/sqlite/rollup-planner.ts). */
export type RollupPlanner = (o: PlanOptions) => Promise<RollupPlan>

/** What one batch writes: the cursor it moves, the rows that differ, and the rest (planBatch). */
export type RollupPlan = Awaited<ReturnType<typeof planBatch>>

interface Cursor {
  verifications: number
  events: number
  ledger: number
  /** When the last run that moved it started (ms). */
  at: number
  /** The first hour of the prefix sums (console_prefixes). */
  prefixFrom?: number
}

class LostRace extends Error {}

const keyOf = (r: RollupRow) => `${r.span}|${r.at}|${r.accountId}|${r.channel}|${r.country}|${r.provider}`
const floor = (t: number, span: number) => t - (((t % span) + span) % span)

/** Rows of `span` at `at` summed per account, channel, country and provider. */
function sumInto(rows: RollupRow[], span: Span, at: (r: RollupRow) => number): RollupRow[] {
  const out = new Map<string, RollupRow>()
  for (const r of rows) {
    const s: RollupRow = { ...r, span, at: at(r) }
    const k = keyOf(s)
    const had = out.get(k)
    if (had) for (const c of ROLLUP_COUNTS) had[c] += r[c]
    else out.set(k, s)
  }
  return [...out.values()]
}

/** What to write so that `stored` becomes `fresh`. */
function diff(stored: RollupRow[], fresh: RollupRow[]): { save: RollupRow[]; gone: RollupRow[] } {
  const old = new Map(stored.map((r) => [keyOf(r), r]))
  const save = fresh.filter((r) => {
    const o = old.get(keyOf(r))
    old.delete(keyOf(r))
    return o === undefined || ROLLUP_COUNTS.some((c) => o[c] !== r[c])
  })
  return { save, gone: [...old.values()] }
}

function refusalOf(row: SourceRow): RefusalRow | null {
  if (row.kind !== 'send.blocked' || row.body === null) return null
  const data = (JSON.parse(row.body) as { data?: { rule?: string; country?: string | null } }).data ?? {}
  return { minute: floor(row.at, MINUTE), accountId: row.accountId, rule: data.rule ?? '', country: data.country ?? '', refusals: 1 }
}

export class Rollup {
  private readonly batch: number
  private planner: RollupPlanner | null = null

  constructor(private readonly d: RollupDeps) {
    this.batch = d.batch ?? DEFAULT_BATCH
  }

  /** Plans each batch with `planner` (null: on this thread, through the storage's reads). */
  planWith(planner: RollupPlanner | null): void {
    this.planner = planner
  }

  /** Runs until every source is caught up; returns how many rollup rows were written. */
  async catchUp(): Promise<number> {
    let written = 0
    for (;;) {
      const r = await this.runOnce()
      written += r.written
      if (!r.more) return written
      // Requests go first between two batches.
      await new Promise((resolve) => setTimeout(resolve, 0))
    }
  }

  /** One bounded batch: reads, recounts and writes; `more` when a source had more rows than the batch. */
  async runOnce(): Promise<{ written: number; more: boolean }> {
    const plan = await this.plan()
    try {
      await this.d.storage.write(async (r) => {
        if (!(await r.rollups.moveCursor(plan.prev, JSON.stringify(plan.next)))) throw new LostRace()
        await r.rollups.saveRows(plan.save, plan.gone)
        await r.rollups.addRefusals(plan.refusals)
        for (const s of SOURCES) {
          await r.rollups.addGaps(s, plan.newGaps[s], plan.now)
          await r.rollups.dropGaps(s, plan.doneGaps[s])
        }
        await r.rollups.dropRows(SPAN.minute, floor(plan.now - MINUTES_KEPT_MS, HOUR))
        await r.rollups.dropRefusals(plan.now - REFUSALS_KEPT_MS)
        for (const p of plan.prefixHours) await r.rollups.savePrefixHour(p.hour, p.save, p.gone)
        await r.rollups.dropPrefixHours(plan.next.prefixFrom!)
        await r.rollups.addToPrefixes(plan.prefixDeltas)
      })
    } catch (err) {
      // Another process ran the same batch first: what it wrote stands.
      if (err instanceof LostRace) return { written: 0, more: true }
      throw err
    }
    return { written: plan.save.length + plan.gone.length, more: plan.more }
  }

  private plan(): Promise<RollupPlan> {
    const { d } = this
    const o = { now: d.clock.now(), batch: this.batch, retentionDays: d.retentionDays(), lateRows: d.lateRows }
    return this.planner ? this.planner(o) : d.storage.read((r) => planBatch(r, o, d.seqOf))
  }
}

/**
 * One batch's reads, in one read transaction (a snapshot): the sources past
 * the cursor, the recounts of what they touch, and what differs from the
 * stored rows. Written by Rollup.runOnce only if the cursor has not moved.
 */
export async function planBatch(r: Pick<Repos, 'rollups'>, o: PlanOptions, seqOf: (id: string) => number | null) {
  const { now } = o
  const prev = await r.rollups.cursor()
  const cur: Cursor = prev === null ? { verifications: 0, events: 0, ledger: 0, at: 0 } : (JSON.parse(prev) as Cursor)
  const next: Cursor = { ...cur, at: now }
  const sources = await readSources(r, o, cur, next)
  const touched = await touchedTimes(r, sources.seen, seqOf)
  const changes: Changes = { save: [], gone: [] }
  const coarse = await recountHours(r, o, touched, changes)
  await recountCoarse(r, coarse, changes)
  const prefixes = await prefixPlan(r, cur, now, touched.hours)
  next.prefixFrom = prefixes.from
  const { save, gone } = changes
  const { newGaps, doneGaps, more } = sources
  return { now, prev, next, save, gone, refusals: touched.refusals, newGaps, doneGaps, more, prefixHours: prefixes.hours, prefixDeltas: prefixes.deltas }
}

/** Rows to write and rows to delete, gathered over a batch's recounts. */
interface Changes {
  save: RollupRow[]
  gone: RollupRow[]
}

function addChanges(into: Changes, c: Changes): void {
  into.save.push(...c.save)
  into.gone.push(...c.gone)
}

/**
 * Each source's rows past the cursor (moving `next` past them), the gaps
 * they leave (PostgreSQL) and the rows of earlier gaps that have come since.
 */
async function readSources(r: Pick<Repos, 'rollups'>, o: PlanOptions, cur: Cursor, next: Cursor) {
  const { now, batch } = o
  const seen: SourceRow[] = []
  const newGaps = { verifications: [], events: [], ledger: [] } as Record<RollupSource, number[]>
  const doneGaps = { verifications: [], events: [], ledger: [] } as Record<RollupSource, number[]>
  let more = false
  for (const s of SOURCES) {
    let after = cur[s]
    const rows = await r.rollups.sourceRows(s, after, batch)
    // Numbers given again from 1 (SQLite, once the sweep emptied the table): start over.
    if (rows.length === 0 && after > 0 && (await r.rollups.sourceEnd(s)) < after) after = 0
    for (const row of rows) {
      if (o.lateRows && row.seq - after > 1 && row.seq - after <= MAX_GAPS && row.at > now - GAP_HOLD_MS) {
        for (let g = after + 1; g < row.seq; g++) newGaps[s].push(g)
      }
      after = row.seq
    }
    next[s] = after
    more ||= rows.length === batch
    seen.push(...rows)
    const gaps = await r.rollups.gaps(s)
    const found = await r.rollups.sourceRowsAt(
      s,
      gaps.map((g) => g.seq),
    )
    seen.push(...found)
    const foundSeqs = new Set(found.map((f) => f.seq))
    for (const g of gaps) if (foundSeqs.has(g.seq) || g.seenAt < now - GAP_HOLD_MS) doneGaps[s].push(g.seq)
  }
  return { seen, newGaps, doneGaps, more }
}

/** What the rows seen may have changed, and the refusals among them. */
interface Touched {
  /** Each touched hour's minutes (a verification's creation minute). */
  minutes: Map<number, Set<number>>
  /** Hours recounted whole: a row names no verification found. */
  wholeHours: Set<number>
  hours: Set<number>
  refusals: RefusalRow[]
}

/** What may have changed: each verification's creation minute; a whole hour when a row names no verification found. */
async function touchedTimes(r: Pick<Repos, 'rollups'>, seen: SourceRow[], seqOf: (id: string) => number | null): Promise<Touched> {
  const minutes = new Map<number, Set<number>>()
  const wholeHours = new Set<number>()
  const touch = (at: number) => {
    const h = floor(at, HOUR)
    const m = minutes.get(h)
    if (m) m.add(floor(at, MINUTE))
    else minutes.set(h, new Set([floor(at, MINUTE)]))
  }
  const byVerification = new Map<number, SourceRow[]>()
  const refusals: RefusalRow[] = []
  for (const row of seen) {
    const refusal = refusalOf(row)
    if (refusal) refusals.push(refusal)
    if (row.kind === 'verification') touch(row.at)
    else if (row.verificationId !== null && row.kind !== 'grant' && row.kind !== 'debit') {
      // The events keep the row number: an id is read (an HMAC) only for a refund.
      const seq = row.verificationSeq ?? seqOf(row.verificationId)
      if (seq === null) wholeHours.add(floor(row.at, HOUR))
      else {
        const rows = byVerification.get(seq)
        if (rows) rows.push(row)
        else byVerification.set(seq, [row])
      }
    }
  }
  const created = await r.rollups.createdAt([...byVerification.keys()])
  for (const [seq, rows] of byVerification) {
    const v = created.get(seq)
    for (const row of rows) {
      if (v !== undefined && v.id === row.verificationId) touch(v.createdAt)
      else wholeHours.add(floor(row.at, HOUR))
    }
  }
  return { minutes, wholeHours, hours: new Set([...minutes.keys(), ...wholeHours]), refusals }
}

/** The quarter days and days to sum again, each with the hours just recounted in it. */
type Coarse = Map<string, { span: Span; at: number; fresh: Map<number, RollupRow[]> }>

/** Each touched hour within the retention recounted, oldest first; answers the coarser spans they fall in. */
async function recountHours(r: Pick<Repos, 'rollups'>, o: PlanOptions, touched: Touched, changes: Changes): Promise<Coarse> {
  const { now } = o
  const oldest = now - o.retentionDays * DAY
  // Hours from here on keep all of their minute rows (the older ones are dropped by the hour).
  const minutesKeptFrom = floor(now - MINUTES_KEPT_MS, HOUR)
  const coarse: Coarse = new Map()
  for (const h of [...touched.hours].sort((a, b) => a - b)) {
    if (h < oldest) continue
    const minutes = touched.minutes.get(h)
    const hourRows =
      !touched.wholeHours.has(h) && minutes !== undefined && h >= minutesKeptFrom
        ? await recountMinutes(r, h, minutes, changes)
        : await recountWholeHour(r, h, now, changes)
    for (const span of COARSE) {
      const at = floor(h, span)
      const k = `${span}|${at}`
      if (!coarse.has(k)) coarse.set(k, { span, at, fresh: new Map() })
      coarse.get(k)!.fresh.set(h, hourRows)
    }
  }
  return coarse
}

/**
 * Only the minutes that changed are recounted (a busy hour is not scanned again and again);
 * the hour is the sum of its minute rows, the stored ones with those just recounted in their place.
 */
async function recountMinutes(r: Pick<Repos, 'rollups'>, h: number, touched: Set<number>, changes: Changes): Promise<RollupRow[]> {
  const fresh = new Map<number, RollupRow[]>()
  for (const m of [...touched].sort((a, b) => a - b)) {
    const counted = await r.rollups.recount(m, m + MINUTE, SPAN.minute)
    addChanges(changes, diff(await r.rollups.rows(SPAN.minute, m, m + MINUTE, null), counted))
    fresh.set(m, counted)
  }
  const minuteRows = (await r.rollups.rows(SPAN.minute, h, h + HOUR, null)).filter((x) => !fresh.has(x.at))
  for (const rows of fresh.values()) minuteRows.push(...rows)
  const hourRows = sumInto(minuteRows, SPAN.hour, () => h)
  addChanges(changes, diff(await r.rollups.rows(SPAN.hour, h, h + HOUR, null), hourRows))
  return hourRows
}

/** An hour recounted whole, with its minute rows while they are kept. */
async function recountWholeHour(r: Pick<Repos, 'rollups'>, h: number, now: number, changes: Changes): Promise<RollupRow[]> {
  const withMinutes = h + HOUR > now - MINUTES_KEPT_MS
  const counted = await r.rollups.recount(h, h + HOUR, withMinutes ? SPAN.minute : SPAN.hour)
  const hourRows = sumInto(counted, SPAN.hour, () => h)
  const hourChanges = diff(await r.rollups.rows(SPAN.hour, h, h + HOUR, null), hourRows)
  const minuteChanges = withMinutes ? diff(await r.rollups.rows(SPAN.minute, h, h + HOUR, null), counted) : null
  addChanges(changes, hourChanges)
  if (minuteChanges) addChanges(changes, minuteChanges)
  return hourRows
}

/** A quarter day or a day is the sum of its hours: the stored ones, with those just recounted in their place. */
async function recountCoarse(r: Pick<Repos, 'rollups'>, coarse: Coarse, changes: Changes): Promise<void> {
  for (const { span, at, fresh } of coarse.values()) {
    const hourRows = (await r.rollups.rows(SPAN.hour, at, at + span, null)).filter((x) => !fresh.has(x.at))
    for (const rows of fresh.values()) hourRows.push(...rows)
    addChanges(
      changes,
      diff(
        await r.rollups.rows(span, at, at + span, null),
        sumInto(hourRows, span, () => at),
      ),
    )
  }
}

/**
 * The prefix sums over the 24 hours holding `now`: each recounted hour
 * (from fraud_sends, which keeps 24 h) adds what changed; each hour that
 * left the window since the last run takes its rows away.
 */
async function prefixPlan(r: Pick<Repos, 'rollups'>, cur: Cursor, now: number, hours: Set<number>) {
  const from = floor(now, HOUR) - (PREFIX_HOURS - 1) * HOUR
  const deltas = new Map<string, PrefixRow>()
  const add = (x: PrefixRow, sign: 1 | -1) => {
    const k = `${x.accountId}|${x.prefix}`
    const had = deltas.get(k) ?? { accountId: x.accountId, prefix: x.prefix, sends: 0, approved: 0 }
    had.sends += sign * x.sends
    had.approved += sign * x.approved
    deltas.set(k, had)
  }
  const last = cur.prefixFrom ?? from
  for (let h = last; h < Math.min(from, last + PREFIX_HOURS * HOUR); h += HOUR) for (const x of await r.rollups.prefixHour(h)) add(x, -1)
  const out: { hour: number; save: PrefixRow[]; gone: PrefixRow[] }[] = []
  for (const h of hours) {
    if (h < from || h > now) continue
    const fresh = await r.rollups.prefixRecount(h, h + HOUR)
    const stored = new Map((await r.rollups.prefixHour(h)).map((x) => [`${x.accountId}|${x.prefix}`, x]))
    const save: PrefixRow[] = []
    for (const x of fresh) {
      const k = `${x.accountId}|${x.prefix}`
      const o = stored.get(k)
      stored.delete(k)
      if (o && o.sends === x.sends && o.approved === x.approved) continue
      save.push(x)
      add(x, 1)
      if (o) add(o, -1)
    }
    for (const o of stored.values()) add(o, -1)
    out.push({ hour: h, save, gone: [...stored.values()] })
  }
  return { from, hours: out, deltas: [...deltas.values()].filter((x) => x.sends !== 0 || x.approved !== 0) }
}
