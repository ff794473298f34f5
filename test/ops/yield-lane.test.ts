/**
 * The sends' lane (lib/yield-lane.ts): in one turn of the event loop a set
 * number of callers go on, the rest of a wave waits for later turns, in
 * order, and what the loop does meanwhile runs before it
 * (docs/benchmarks.md#slow-providers).
 */
import { expect, test } from 'bun:test'
import { YieldLane } from '../../src/lib/yield-lane.ts'

test('a wave past the turn size waits for later turns: what the loop does meanwhile runs before the rest of it', async () => {
  const lane = new YieldLane(3)
  const done: number[] = []
  const wave = Array.from({ length: 20 }, async (_, i) => {
    const wait = lane.turn()
    if (wait) await wait
    done.push(i)
  })
  // Stands for a request read in the next turn (a verify): the first 3 went on at once, 3 more in the lane's next turn.
  const seen = await new Promise<number>((resolve) => setImmediate(() => resolve(done.length)))
  await Promise.all(wave)
  expect(seen).toBeGreaterThanOrEqual(3)
  expect(seen).toBeLessThanOrEqual(6)
  expect(done).toEqual(Array.from({ length: 20 }, (_, i) => i))
})

test('callers within the turn size go on at once, turn after turn', async () => {
  const lane = new YieldLane(2)
  expect(lane.turn()).toBeUndefined()
  expect(lane.turn()).toBeUndefined()
  expect(lane.turn()).toBeInstanceOf(Promise)
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
  expect(lane.turn()).toBeUndefined()
})
