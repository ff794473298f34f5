/**
 * The console's rollups and reads (otp/ports/stats.ts) for both engines: one
 * class over the statements of stats.ts and console-reads.ts, run through a
 * `Runner` each engine gives (store/sqlite/repos.ts, store/pg/repos.ts). No
 * rule here needs a lock: the rollup's cursor is moved by a compare-and-set
 * in the transaction that writes what it read (otp/rollup.ts).
 */
import type {
  DeliveryRow,
  DeliverySearch,
  RefusalRow,
  RefusedSend,
  RollupRow,
  RollupSource,
  RollupStore,
  PrefixRow,
  SearchPage,
  SourceRow,
  Span,
  StatsReads,
  TimelineEvent,
  VerificationSearch,
  WorkflowStepRow,
} from '../../otp/ports/index.ts'
import type { Verification } from '../../otp/types.ts'
import { consoleReadSql, searchEndStatement, searchStatement, toDelivery, toTimeline, WORKFLOW_LOOK_BACK_MS, workflowStepRows } from './console-reads.ts'
import type { Dialect } from './dialect.ts'
import { ROLLUP_CURSOR, rollupParams, statsSql, toPrefix, toRefusal, toRollup } from './stats.ts'
import { num, type Param, type Row } from './values.ts'
import { toVerification } from './verifications.ts'

/** Runs a shared statement (`$n` placeholders) on the engine's connection or transaction. */
export interface Runner {
  all(text: string, params: Param[]): Promise<Row[]>
  run(text: string, params: Param[]): Promise<void>
}

function toSource(r: Row): SourceRow {
  return {
    seq: num(r.seq),
    accountId: num(r.account_id),
    verificationId: (r.verification_id as string | null) ?? null,
    verificationSeq: r.verification_seq == null ? null : num(r.verification_seq),
    at: num(r.at),
    kind: r.kind as string,
    body: (r.body as string | null) ?? null,
  }
}

export class SqlStatsStore implements RollupStore, StatsReads {
  private readonly s
  private readonly c

  constructor(
    private readonly db: Runner,
    d: Dialect,
  ) {
    this.s = statsSql(d)
    this.c = consoleReadSql(d)
  }

  async cursor(): Promise<string | null> {
    const rows = await this.db.all(this.s.cursor, [ROLLUP_CURSOR])
    return rows[0] === undefined ? null : (rows[0].value as string)
  }

  async moveCursor(prev: string | null, next: string): Promise<boolean> {
    const rows =
      prev === null ? await this.db.all(this.s.createCursor, [ROLLUP_CURSOR, next]) : await this.db.all(this.s.moveCursor, [ROLLUP_CURSOR, prev, next])
    return rows.length === 1
  }

  async sourceRows(source: RollupSource, after: number, limit: number): Promise<SourceRow[]> {
    return (await this.db.all(this.s.sourceRows[source], [after, limit])).map(toSource)
  }

  async sourceRowsAt(source: RollupSource, seqs: number[]): Promise<SourceRow[]> {
    if (seqs.length === 0) return []
    return (await this.db.all(this.s.sourceRowsAt[source], [JSON.stringify(seqs)])).map(toSource)
  }

  async sourceEnd(source: RollupSource): Promise<number> {
    return num((await this.db.all(this.s.sourceEnd[source], []))[0]?.n ?? 0)
  }

  async createdAt(seqs: number[]): Promise<Map<number, { id: string; createdAt: number }>> {
    const out = new Map<number, { id: string; createdAt: number }>()
    if (seqs.length === 0) return out
    for (const r of await this.db.all(this.s.createdAt, [JSON.stringify(seqs)])) out.set(num(r.seq), { id: r.id as string, createdAt: num(r.created_at) })
    return out
  }

  async recount(from: number, to: number, span: Span): Promise<RollupRow[]> {
    return (await this.db.all(this.s.recount, [from, to, span])).map((r) => toRollup({ ...r, span }))
  }

  async rows(span: Span, from: number, to: number, accountId: number | null): Promise<RollupRow[]> {
    return (await this.db.all(this.s.rows, [span, from, to, accountId ?? -1])).map(toRollup)
  }

  async saveRows(rows: RollupRow[], gone: RollupRow[]): Promise<void> {
    for (const r of rows) await this.db.run(this.s.saveRow, rollupParams(r))
    for (const r of gone) await this.db.run(this.s.deleteRow, [r.span, r.at, r.accountId, r.channel, r.country, r.provider])
  }

  async dropRows(span: Span, before: number): Promise<void> {
    await this.db.run(this.s.dropRows, [span, before])
  }

  async addRefusals(rows: RefusalRow[]): Promise<void> {
    for (const r of rows) await this.db.run(this.s.addRefusals, [r.minute, r.accountId, r.rule, r.country, r.refusals])
  }

  async dropRefusals(before: number): Promise<void> {
    await this.db.run(this.s.dropRefusals, [before])
  }

  async gaps(source: RollupSource): Promise<{ seq: number; seenAt: number }[]> {
    return (await this.db.all(this.s.gaps, [source])).map((r) => ({ seq: num(r.seq), seenAt: num(r.seen_at) }))
  }

  async addGaps(source: RollupSource, seqs: number[], at: number): Promise<void> {
    if (seqs.length > 0) await this.db.run(this.s.addGaps, [source, JSON.stringify(seqs), at])
  }

  async dropGaps(source: RollupSource, seqs: number[]): Promise<void> {
    if (seqs.length > 0) await this.db.run(this.s.dropGaps, [source, JSON.stringify(seqs)])
  }

  async prefixRecount(from: number, to: number): Promise<PrefixRow[]> {
    return (await this.db.all(this.s.prefixRecount, [from, to])).map(toPrefix)
  }

  async prefixHour(hour: number): Promise<PrefixRow[]> {
    return (await this.db.all(this.s.prefixHour, [hour])).map(toPrefix)
  }

  async savePrefixHour(hour: number, rows: PrefixRow[], gone: PrefixRow[]): Promise<void> {
    for (const r of rows) await this.db.run(this.s.savePrefixHour, [hour, r.accountId, r.prefix, r.sends, r.approved])
    for (const r of gone) await this.db.run(this.s.deletePrefixHour, [hour, r.accountId, r.prefix])
  }

  async dropPrefixHours(before: number): Promise<void> {
    await this.db.run(this.s.dropPrefixHours, [before])
  }

  async addToPrefixes(deltas: PrefixRow[]): Promise<void> {
    for (const d of deltas) {
      await this.db.run(this.s.addToPrefix, [d.accountId, d.prefix, d.sends, d.approved])
      if (d.sends < 0) await this.db.run(this.s.dropEmptyPrefixes, [d.accountId, d.prefix])
    }
  }

  // The console's reads.

  rollups(span: Span, from: number, to: number, accountId: number | null): Promise<RollupRow[]> {
    return this.rows(span, from, to, accountId)
  }

  async refusals(from: number, to: number, accountId: number | null): Promise<RefusalRow[]> {
    return (await this.db.all(this.s.refusals, [from, to, accountId ?? -1])).map(toRefusal)
  }

  async search(q: VerificationSearch): Promise<SearchPage> {
    const page = searchStatement(q)
    const rows = (await this.db.all(page.text, page.params)).map(toVerification)
    if (rows.length === q.limit) {
      const last = rows.at(-1)!
      return { rows, next: { at: last.createdAt, seq: last.seq } }
    }
    // Fewer than asked: the walk ended with the period, or at its budget (then the next page goes on from there).
    const end = searchEndStatement(q)
    const stop = (await this.db.all(end.text, end.params))[0]
    return { rows, next: stop === undefined ? null : { at: num(stop.created_at), seq: num(stop.seq) } }
  }

  async byRecipient(hash: Uint8Array, from: number, to: number, before: { at: number; seq: number } | null, limit: number): Promise<Verification[]> {
    const rows = await this.db.all(this.c.byRecipient, [hash, from, before?.at ?? to, before?.seq ?? Number.MAX_SAFE_INTEGER, limit])
    return rows.map(toVerification)
  }

  async refusalsByRecipient(hash: Uint8Array, from: number, to: number, limit: number): Promise<RefusedSend[]> {
    const rows = await this.db.all(this.c.refusalsByRecipient, [hash, from, to, limit])
    return rows.map((r) => ({ id: r.id as string, accountId: num(r.account_id), occurredAt: num(r.occurred_at), body: r.body as string }))
  }

  async workflowSteps(from: number, to: number, accountId: number | null): Promise<WorkflowStepRow[]> {
    return workflowStepRows(await this.db.all(this.c.workflowSends, [from - WORKFLOW_LOOK_BACK_MS, from, to, accountId ?? -1]))
  }

  async timeline(seq: number, id: string): Promise<TimelineEvent[]> {
    return (await this.db.all(this.c.timeline, [seq, id])).map(toTimeline)
  }

  async deliveries(q: DeliverySearch): Promise<{ rows: DeliveryRow[]; next: number | null }> {
    const before = q.before ?? Number.MAX_SAFE_INTEGER
    const rows = (await this.db.all(this.c.deliveries, [before, q.from, q.accountId ?? -1, q.budget, q.status ?? '', q.limit])).map(toDelivery)
    if (rows.length === q.limit) return { rows, next: rows.at(-1)!.eventSeq }
    // Fewer than asked: the walk reached its budget (go on from there) or went past the period's start (done).
    const stop = (await this.db.all(this.c.deliveriesEnd, [before, q.budget - 1]))[0]
    return { rows, next: stop === undefined || num(stop.occurred_at) < q.from ? null : num(stop.event_seq) }
  }

  async topPrefixes(accountId: number | null, limit: number): Promise<PrefixRow[]> {
    const rows = accountId === null ? await this.db.all(this.s.topPrefixes, [limit]) : await this.db.all(this.s.topAccountPrefixes, [accountId, limit])
    return rows.map(toPrefix)
  }
}
