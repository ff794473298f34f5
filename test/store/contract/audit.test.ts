/**
 * AuditLog contract: entries appended and listed newest first, filtered by
 * period, action and operator, paged by id; details kept as JSON. The same on
 * every engine.
 */
import { expect, test } from 'bun:test'
import type { AuditEntry } from '../../../src/otp/ports/index.ts'
import { MINUTE, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

const entry = (i: number, o: Partial<AuditEntry> = {}): AuditEntry => ({
  at: T0 + i * MINUTE,
  operator: 'amy',
  source: 'console',
  action: 'credits.added',
  subject: 'account default',
  details: { amount: i, note: `n${i}`, nested: { ok: true } },
  ...o,
})

test('appended entries are listed newest first, with their details as given', async () => {
  await storage().write(async (r) => {
    for (let i = 0; i < 3; i++) await r.audit.append(entry(i))
  })
  const rows = await storage().read((r) => r.audit.list({ limit: 10 }))
  expect(rows.map((e) => e.details.amount)).toEqual([2, 1, 0])
  expect(rows[0]).toEqual({ id: rows[0]!.id, ...entry(2) })
  expect(rows[0]!.id).toBeGreaterThan(rows[1]!.id)
})

test('filters: period [since, until), action, operator; paging by id; limit', async () => {
  await storage().write(async (r) => {
    await r.audit.append(entry(0, { action: 'key.created', subject: 'key 1' }))
    await r.audit.append(entry(1, { operator: 'bob', source: 'cli' }))
    await r.audit.append(entry(2))
    await r.audit.append(entry(3, { action: 'key.disabled', subject: 'key 1' }))
  })
  const list = (q: Parameters<import('../../../src/otp/ports/index.ts').AuditLog['list']>[0]) =>
    storage().read(async (r) => (await r.audit.list(q)).map((e) => e.at - T0))
  expect(await list({ limit: 10, since: T0 + MINUTE, until: T0 + 3 * MINUTE })).toEqual([2 * MINUTE, MINUTE])
  expect(await list({ limit: 10, action: 'credits.added' })).toEqual([2 * MINUTE, MINUTE])
  expect(await list({ limit: 10, operator: 'bob' })).toEqual([MINUTE])
  expect(await list({ limit: 2 })).toEqual([3 * MINUTE, 2 * MINUTE])
  const newest = await storage().read((r) => r.audit.list({ limit: 1 }))
  expect(await list({ limit: 10, beforeId: newest[0]!.id })).toEqual([2 * MINUTE, MINUTE, 0])
})
