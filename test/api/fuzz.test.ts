/**
 * Fuzz, the fast version of scripts/proofs/fuzz.ts (docs/reliability.md): 10,000
 * generated hostile requests over a real socket to the real app. No 5xx, no
 * error logged, every 4xx a documented message with a request id.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { runFuzz } from '../kit/processes.ts'
import { createHarness, type Harness } from '../kit/harness.ts'

let h: Harness
let port: number
let keys: { active: string; disabled: string; revoked: string }

beforeAll(async () => {
  h = await createHarness({
    credits: 1_000_000,
    config: {
      limits: {
        key_requests_per_minute: 1_000_000_000,
        recipient_per_minute: 1_000_000_000,
        recipient_per_hour: 1_000_000_000,
        recipient_per_day: 1_000_000_000,
      },
    },
  })
  const disabled = await h.server.admin.createKey({ name: 'disabled' })
  const revoked = await h.server.admin.createKey({ name: 'revoked' })
  await h.server.admin.setKeyStatus(String(disabled.id), 'disabled')
  await h.server.admin.setKeyStatus(String(revoked.id), 'revoked')
  keys = { active: h.key, disabled: disabled.key, revoked: revoked.key }
  port = Number(new URL(h.listen()).port)
})
afterAll(() => h.close())

const errorLines = () => h.logs.filter((l) => l.includes('"level":"error"'))

test('10,000 generated requests: no 5xx, no error logged, every 4xx documented with a request id', async () => {
  const r = await runFuzz({ host: '127.0.0.1', port, keys, count: 10_000, seed: 4, concurrency: 16, rawIdleMs: 500 })
  expect(r.violations).toEqual([])
  expect(r.cases).toBe(10_000)
  expect(Object.keys(r.byStatus).filter((s) => Number(s) >= 500)).toEqual([])
  // The run reached every layer: auth, body, validation and the operations.
  for (const status of ['200', '400', '401', '403', '404', '405', '413']) expect(r.byStatus[status] ?? 0).toBeGreaterThan(0)
  expect(r.rawCases).toBeGreaterThan(500)
  expect(errorLines()).toEqual([])
}, 120_000)
