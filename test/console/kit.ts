/**
 * The console's read endpoints under test: the plugin alone (the session
 * guard wraps it elsewhere), on the harness's server, driven with
 * app.handle(). `get` brings the rollups up to date first unless told not to.
 */
import { Elysia } from 'elysia'
import { consoleReadRoutes } from '../../src/console/read-routes.ts'
import type { Harness, Result } from '../kit/harness.ts'

export function consoleOf(h: Harness) {
  const app = new Elysia().use(consoleReadRoutes(h.server.consoleRead))
  return {
    async get(path: string, opts: { rollup?: boolean } = {}): Promise<Result> {
      // A send settles after its answer (otp/send.ts): its record first, then the rollup.
      await h.server.storage.settled()
      if (opts.rollup !== false) await h.server.rollup.catchUp()
      const res = await app.handle(new Request(`http://localhost${path}`))
      const text = await res.text()
      return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : {} }
    },
  }
}

/** Numbers of three countries (fictional ranges). */
export const NUMBERS = {
  US: (i: number) => `+1415555${String(1000 + i).padStart(4, '0')}`,
  GB: (i: number) => `+44740012${String(1000 + i).padStart(4, '0')}`,
  DE: (i: number) => `+49151${String(1000000 + i).padStart(7, '0')}`,
}
