/**
 * Watches the events a server hands its outbox (docs/api.md#events), on
 * either engine: every write's `events.add` is seen on its way to the real
 * outbox (SQLite's writes share one repositories object, PostgreSQL's each
 * have their own). An event of a write that is rolled back is seen too.
 */
import type { NewEvent, Repos } from '../../src/otp/ports/index.ts'
import type { Harness } from './harness.ts'

export function watchEvents(h: Harness, keep: (e: NewEvent) => boolean = () => true): NewEvent[] {
  const events: NewEvent[] = []
  const storage = h.server.storage
  const write = storage.write.bind(storage)
  const watched = new WeakSet<object>()
  storage.write = <T>(fn: (r: Repos) => Promise<T>): Promise<T> =>
    write((r) => {
      if (!watched.has(r.events)) {
        watched.add(r.events)
        const add = r.events.add.bind(r.events)
        r.events.add = async (e) => {
          if (keep(e)) events.push(structuredClone(e))
          await add(e)
        }
      }
      return fn(r)
    })
  return events
}
