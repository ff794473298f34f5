/**
 * The bench's WAL flush figures (scripts/perf/bench.ts): otpd_wal_flush_seconds
 * read from /metrics before and after a measured run, and what happened in
 * between, so that a run on a stalling disk can be told from a regression;
 * and the webhook outbox depth at the end of the run, so that a dispatcher
 * falling behind shows.
 */
export interface WalFlushFigures {
  flushes: number
  /** The smallest histogram bound at or under which 99 % of the run's flushes ended. */
  p99_ms_at_most: number | null
  /** Flushes of 25 ms or more: a disk this slow shows in the tail whatever the server does. */
  at_least_25ms: number
  mean_ms: number | null
}

/** otpd_wal_flush_seconds as scraped: cumulative count per bucket bound (seconds), total count and sum. */
export type FlushHistogram = { buckets: Map<number, number>; count: number; sum: number }

/** otpd's WAL flush histogram from a /metrics text; null when it has none (NORMAL: no flushes). */
export function parseFlushes(text: string): FlushHistogram | null {
  const h: FlushHistogram = { buckets: new Map(), count: 0, sum: 0 }
  let seen = false
  for (const m of text.matchAll(/^otpd_wal_flush_seconds_(bucket\{le="([^"]+)"\}|count|sum) (\S+)$/gm)) {
    seen = true
    const v = Number(m[3])
    if (m[2] !== undefined) {
      if (m[2] !== '+Inf') h.buckets.set(Number(m[2]), v)
    } else if (m[1] === 'count') h.count = v
    else h.sum = v
  }
  return seen ? h : null
}

/** What happened between two scrapes. */
export function flushFigures(before: FlushHistogram, after: FlushHistogram): WalFlushFigures {
  const flushes = after.count - before.count
  const bounds = [...after.buckets.keys()].sort((a, b) => a - b)
  const within = (le: number) => (after.buckets.get(le) ?? 0) - (before.buckets.get(le) ?? 0)
  const p99 = bounds.find((le) => within(le) >= flushes * 0.99)
  return {
    flushes,
    p99_ms_at_most: flushes === 0 || p99 === undefined ? null : Math.round(p99 * 1e6) / 1000,
    at_least_25ms: flushes - within(0.025),
    mean_ms: flushes === 0 ? null : Math.round(((after.sum - before.sum) / flushes) * 1e6) / 1000,
  }
}

/** otpd_webhook_outbox_depth from a /metrics text: the deliveries still pending; null when it has none (a build without webhooks). */
export function parseOutboxDepth(text: string): number | null {
  const m = /^otpd_webhook_outbox_depth (\S+)$/m.exec(text)
  return m ? Number(m[1]) : null
}
