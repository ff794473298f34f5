/**
 * The sends' lane (lib/yield-lane.ts): a wave of bulk work gives way to the
 * rest of the event loop after its budget, and runs on, in order, in later
 * turns (docs/benchmarks.md#slow-providers).
 */
import { expect, test } from 'bun:test'
import { YieldLane } from '../../src/lib/yield-lane.ts'

/** Holds the thread for `ms`, as a send's work would. */
const spin = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end);
}

test('a wave past the budget waits for later turns: what the loop does meanwhile runs before the rest of it', async () => {
  const lane = new YieldLane(2)
  const done: number[] = []
  const wave = Array.from({ length: 20 }, async (_, i) => {
    const wait = lane.turn()
    if (wait) await wait
    spin(1)
    done.push(i)
  })
  // Stands for a request read in the next turn (a verify).
  const seen = await new Promise<number>((resolve) => setImmediate(() => resolve(done.length)))
  await Promise.all(wave)
  expect(seen).toBeGreaterThanOrEqual(2)
  expect(seen).toBeLessThan(10)
  expect(done).toEqual(Array.from({ length: 20 }, (_, i) => i))
})

test('work alone, or within the budget, goes on at once', async () => {
  const lane = new YieldLane(50)
  expect(lane.turn()).toBeUndefined()
  expect(lane.turn()).toBeUndefined()
  await new Promise((resolve) => setImmediate(resolve))
  expect(lane.turn()).toBeUndefined()
})
