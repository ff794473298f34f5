/**
 * The bench's WAL flush figures (scripts/perf/flush-figures.ts) read the
 * histogram otpd really renders at /metrics, and count only what happened
 * between two scrapes; its outbox depth is the gauge otpd renders.
 */
import { expect, test } from 'bun:test'
import { createServiceMetrics } from '../../src/http/service-metrics.ts'
import { flushFigures, parseFlushes, parseOutboxDepth } from '../../scripts/perf/flush-figures.ts'

const metrics = () => createServiceMetrics({ creditBalances: () => [], databaseFiles: () => [], version: 'test', startedAt: 0 })

test('no flush histogram in the text (NORMAL, nothing flushed yet): null', async () => {
  expect(parseFlushes(await metrics().render())).toBeNull()
})

test('flushes between two scrapes: count, mean, the bound 99 % fall within, and those of 25 ms or more', async () => {
  const m = metrics()
  m.walFlush(0.4)
  m.walFlush(30) // before the run: not counted
  const before = parseFlushes(await m.render())!
  expect(before.count).toBe(2)
  for (let i = 0; i < 97; i++) m.walFlush(0.8)
  m.walFlush(3) // 98 of 100 within 5 ms
  m.walFlush(12) // 99 within 25 ms
  m.walFlush(40)
  const f = flushFigures(before, parseFlushes(await m.render())!)
  expect(f.flushes).toBe(100)
  expect(f.p99_ms_at_most).toBe(25)
  expect(f.at_least_25ms).toBe(1)
  expect(f.mean_ms).toBeCloseTo((97 * 0.8 + 3 + 12 + 40) / 100, 3)
})

test('every flush fast: 99 % within the smallest bound that holds them', async () => {
  const m = metrics()
  m.walFlush(1)
  const before = parseFlushes(await m.render())!
  for (let i = 0; i < 200; i++) m.walFlush(0.3)
  const f = flushFigures(before, parseFlushes(await m.render())!)
  expect(f).toEqual({ flushes: 200, p99_ms_at_most: 0.5, at_least_25ms: 0, mean_ms: 0.3 })
})

test('no flush between the scrapes: no percentile, no mean', async () => {
  const m = metrics()
  m.walFlush(2)
  const h = parseFlushes(await m.render())!
  expect(flushFigures(h, h)).toEqual({ flushes: 0, p99_ms_at_most: null, at_least_25ms: 0, mean_ms: null })
})

test('the webhook outbox depth is the gauge otpd renders', async () => {
  const m = createServiceMetrics({ creditBalances: () => [], databaseFiles: () => [], version: 'test', startedAt: 0, outboxDepth: async () => 1234 })
  expect(parseOutboxDepth(await m.render())).toBe(1234)
  expect(parseOutboxDepth('otpd_up 1\n')).toBeNull()
})
