/**
 * FraudStore contract: the fraud guard's account settings, send counters,
 * approvals, blocks and the daily credit window, every method, the same on
 * every engine.
 */
import { describe, expect, test } from 'bun:test'
import type { BlockRow, FraudSendRow, GuardReadsQuery } from '../../../src/otp/ports/index.ts'
import { GUARD_READS, guardReadsParams } from '../../../src/store/pg/fraud-store.ts'
import { accountWithKey, DEFAULT_ACCOUNT, hash, MINUTE, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

const send = (seq: number, o: Partial<FraudSendRow> = {}): FraudSendRow => ({
  seq,
  accountId: DEFAULT_ACCOUNT,
  at: T0,
  country: 'UZ',
  prefix: '+99890',
  ipHash: hash('ip-1'),
  counted: true,
  ...o,
})
/**
 * PostgreSQL sorts text by the database's locale unless a statement says
 * otherwise; the tests' cluster is made without one (C, byte order), where
 * production databases mostly have one. Gives these columns a locale's order,
 * so that a statement relying on the default order fails here.
 */
async function sortByLocale(table: string, columns: string[]): Promise<void> {
  if (engine().name !== 'postgres') return
  for (const c of columns) await engine().sql(`ALTER TABLE ${table} ALTER COLUMN ${c} TYPE text COLLATE "und-x-icu"`)
}

const record = (...sends: FraudSendRow[]) =>
  storage().write(async (r) => {
    for (const s of sends) await r.fraud.recordSend(s)
  })

describe('account settings', () => {
  test('none set: the config decides, and test recipients are allowed', async () => {
    expect(await storage().read((r) => r.fraud.accountSettings(DEFAULT_ACCOUNT))).toEqual({
      allowedCountries: null,
      dailyCreditLimit: null,
      testRecipients: true,
    })
  })

  test('each setting changes alone, and goes back to the config with null', async () => {
    const { accountId } = await accountWithKey(storage(), 'acme')
    const settings = () => storage().write((r) => r.fraud.accountSettings(accountId))
    await storage().write((r) => r.fraud.setAccountSettings(accountId, { allowedCountries: ['US', 'CA'] }))
    expect(await settings()).toEqual({ allowedCountries: ['US', 'CA'], dailyCreditLimit: null, testRecipients: true })
    await storage().write((r) => r.fraud.setAccountSettings(accountId, { dailyCreditLimit: 50, testRecipients: false }))
    expect(await settings()).toEqual({ allowedCountries: ['US', 'CA'], dailyCreditLimit: 50, testRecipients: false })
    await storage().write((r) => r.fraud.setAccountSettings(accountId, { allowedCountries: null, dailyCreditLimit: null, testRecipients: true }))
    expect(await settings()).toEqual({ allowedCountries: null, dailyCreditLimit: null, testRecipients: true })
    expect(await storage().read((r) => r.fraud.accountSettings(DEFAULT_ACCOUNT))).toEqual({
      allowedCountries: null,
      dailyCreditLimit: null,
      testRecipients: true,
    })
  })
})

describe('send windows (rules 2 and 3)', () => {
  test('ipSendTimes: counted sends of the IP after `since`, ascending', async () => {
    await record(
      send(1, { at: T0 + 3 }),
      send(2, { at: T0 + 1 }),
      send(3, { at: T0 + 2, counted: false }),
      send(4, { at: T0 + 4, ipHash: hash('ip-2') }),
      send(5, { at: T0 + 5, ipHash: null }),
      send(6, { at: T0 }),
    )
    expect(await storage().write((r) => r.fraud.ipSendTimes(hash('ip-1'), T0))).toEqual([T0 + 1, T0 + 3])
    expect(await storage().read((r) => r.fraud.ipSendTimes(hash('ip-3'), 0))).toEqual([])
  })

  test("countrySendTimes: the account's counted sends to the country after `since`, ascending", async () => {
    const { accountId } = await accountWithKey(storage(), 'acme')
    await record(
      send(1, { at: T0 + 2 }),
      send(2, { at: T0 + 1 }),
      send(3, { at: T0 + 3, counted: false }),
      send(4, { at: T0 + 4, country: 'KZ' }),
      send(5, { at: T0 + 5, accountId }),
      send(6, { at: T0 }),
    )
    expect(await storage().write((r) => r.fraud.countrySendTimes(DEFAULT_ACCOUNT, 'UZ', T0))).toEqual([T0 + 1, T0 + 2])
    expect(await storage().write((r) => r.fraud.countrySendTimes(accountId, 'UZ', 0))).toEqual([T0 + 5])
  })
})

describe('approvals and drops', () => {
  test('approved: a counted send proves its country (the latest approval kept); an uncounted one proves nothing', async () => {
    await record(send(1, { at: T0 }), send(2, { at: T0, country: 'KZ', prefix: '+7701', counted: false }), send(3, { at: T0 }))
    expect(await storage().read((r) => r.fraud.lastApproval(DEFAULT_ACCOUNT, 'UZ'))).toBeNull()
    await storage().write(async (r) => {
      await r.fraud.approved(3, T0 + 2 * MINUTE)
      await r.fraud.approved(1, T0 + MINUTE)
      await r.fraud.approved(2, T0 + MINUTE)
    })
    expect(await storage().write((r) => r.fraud.lastApproval(DEFAULT_ACCOUNT, 'UZ'))).toBe(T0 + 2 * MINUTE)
    expect(await storage().read((r) => r.fraud.lastApproval(DEFAULT_ACCOUNT, 'KZ'))).toBeNull()
    // The minute's counters (T0's minute is a whole minute of this window) count each approval once.
    const counters = () => storage().read((r) => r.fraud.conversion(DEFAULT_ACCOUNT, 'country', 'UZ', T0 - MINUTE, T0 + 2 * MINUTE))
    expect(await counters()).toEqual({ sends: 2, approved: 2 })
    // A send approves once: a second approval changes nothing.
    await storage().write((r) => r.fraud.approved(3, T0 + 9 * MINUTE))
    expect(await storage().read((r) => r.fraud.lastApproval(DEFAULT_ACCOUNT, 'UZ'))).toBe(T0 + 2 * MINUTE)
    expect(await counters()).toEqual({ sends: 2, approved: 2 })
  })

  test('conversion counts counted sends of a scope and their approvals, within a minute and across minutes', async () => {
    const at = (m: number, s = 0) => T0 + m * MINUTE + s * 1000
    await record(
      send(1, { at: at(0, 10) }),
      send(2, { at: at(0, 50) }),
      send(3, { at: at(1, 30), prefix: '+99891' }),
      send(4, { at: at(2, 0) }),
      send(5, { at: at(3, 59) }),
      send(6, { at: at(1, 0), counted: false }),
    )
    await storage().write(async (r) => {
      await r.fraud.approved(1, at(9))
      await r.fraud.approved(4, at(9))
      await r.fraud.approved(6, at(9))
    })
    const conv = (kind: 'country' | 'prefix', scope: string, from: number, to: number) =>
      storage().read((r) => r.fraud.conversion(DEFAULT_ACCOUNT, kind, scope, from, to))
    expect(await conv('country', 'UZ', at(0, 10), at(0, 49))).toEqual({ sends: 1, approved: 1 })
    expect(await conv('country', 'UZ', at(0, 11), at(3, 59))).toEqual({ sends: 4, approved: 1 })
    expect(await conv('country', 'UZ', at(0), at(3, 58))).toEqual({ sends: 4, approved: 2 })
    expect(await conv('country', 'UZ', at(0), at(9))).toEqual({ sends: 5, approved: 2 })
    expect(await conv('prefix', '+99890', at(0), at(9))).toEqual({ sends: 4, approved: 2 })
    expect(await conv('prefix', '+99891', at(0), at(9))).toEqual({ sends: 1, approved: 0 })
    expect(await conv('country', 'KZ', at(0), at(9))).toEqual({ sends: 0, approved: 0 })
  })

  test('dropSend: a send no provider took counts toward no rule and no conversion', async () => {
    const at = (m: number) => T0 + m * MINUTE
    await record(send(1, { at: at(0) }), send(2, { at: at(2) }), send(3, { at: at(4) }))
    await storage().write((r) => r.fraud.approved(2, at(5)))
    await storage().write(async (r) => {
      await r.fraud.dropSend(2)
      await r.fraud.dropSend(99)
    })
    expect(await storage().read((r) => r.fraud.ipSendTimes(hash('ip-1'), 0))).toEqual([at(0), at(4)])
    expect(await storage().read((r) => r.fraud.conversion(DEFAULT_ACCOUNT, 'country', 'UZ', at(0), at(9)))).toEqual({ sends: 2, approved: 0 })
    expect(await storage().read((r) => r.fraud.conversion(DEFAULT_ACCOUNT, 'prefix', '+99890', at(0), at(9)))).toEqual({ sends: 2, approved: 0 })
  })
})

describe('blocks (rule 4)', () => {
  const block = (o: Partial<BlockRow> = {}): BlockRow => ({
    accountId: DEFAULT_ACCOUNT,
    kind: 'prefix',
    scope: '+99890',
    startedAt: T0,
    until: T0 + 15 * MINUTE,
    level: 0,
    countsFrom: 0,
    ...o,
  })

  test('saveBlock writes a block and replaces it; block reads it back', async () => {
    expect(await storage().write((r) => r.fraud.block(DEFAULT_ACCOUNT, 'prefix', '+99890'))).toBeUndefined()
    await storage().write((r) => r.fraud.saveBlock(block()))
    expect(await storage().write((r) => r.fraud.block(DEFAULT_ACCOUNT, 'prefix', '+99890'))).toEqual(block())
    const lifted = block({ until: null, startedAt: null, level: 1, countsFrom: T0 + 5 })
    await storage().write((r) => r.fraud.saveBlock(lifted))
    expect(await storage().read((r) => r.fraud.block(DEFAULT_ACCOUNT, 'prefix', '+99890'))).toEqual(lifted)
    expect(await storage().read((r) => r.fraud.block(DEFAULT_ACCOUNT, 'country', '+99890'))).toBeUndefined()
  })

  test('activeBlocks: blocks still in force, of one account or all, by account, then latest end, kind and scope (byte order)', async () => {
    await sortByLocale('fraud_blocks', ['kind', 'scope'])
    const { accountId } = await accountWithKey(storage(), 'acme')
    await storage().write(async (r) => {
      await r.fraud.saveBlock(block({ scope: '+99890', until: T0 + MINUTE }))
      await r.fraud.saveBlock(block({ scope: '+99891', until: T0 + 2 * MINUTE }))
      await r.fraud.saveBlock(block({ kind: 'country', scope: 'UZ', until: T0 + MINUTE }))
      await r.fraud.saveBlock(block({ scope: '+99892', until: T0 }))
      await r.fraud.saveBlock(block({ scope: '+99893', until: null }))
      await r.fraud.saveBlock(block({ accountId, scope: 'Z', until: T0 + MINUTE }))
      await r.fraud.saveBlock(block({ accountId, scope: 'a', until: T0 + MINUTE }))
    })
    const active = (account: number | undefined) =>
      storage().read(async (r) => (await r.fraud.activeBlocks(account, T0)).map((b) => [b.accountId, b.kind, b.scope]))
    expect(await active(undefined)).toEqual([
      [DEFAULT_ACCOUNT, 'prefix', '+99891'],
      [DEFAULT_ACCOUNT, 'country', 'UZ'],
      [DEFAULT_ACCOUNT, 'prefix', '+99890'],
      [accountId, 'prefix', 'Z'],
      [accountId, 'prefix', 'a'],
    ])
    expect(await active(accountId)).toEqual([
      [accountId, 'prefix', 'Z'],
      [accountId, 'prefix', 'a'],
    ])
  })
})

test('nthLatestDebit: send debits not refunded after `since`, newest first', async () => {
  const { accountId } = await accountWithKey(storage(), 'acme')
  await storage().write(async (r) => {
    await r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'grant', amount: 100, at: T0 })
    for (const [id, at] of [
      ['v-1', T0 + 1],
      ['v-2', T0 + 2],
      ['v-3', T0 + 3],
      ['v-4', T0 + 4],
    ] as const)
      await r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 1, verificationId: id, at })
    await r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'refund', amount: 1, verificationId: 'v-3', at: T0 + 5 })
    // An operator's correction (a debit of no send) is not a send.
    await r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'debit', amount: 1, note: 'correction', at: T0 + 6 })
    await r.credits.post({ accountId, kind: 'grant', amount: 10, at: T0 })
    await r.credits.debit({ accountId, amount: 1, verificationId: 'v-9', at: T0 + 7 })
  })
  const nth = (since: number, n: number) => storage().write((r) => r.fraud.nthLatestDebit(DEFAULT_ACCOUNT, since, n))
  expect(await nth(T0, 1)).toBe(T0 + 4)
  expect(await nth(T0, 2)).toBe(T0 + 2)
  expect(await nth(T0, 3)).toBe(T0 + 1)
  expect(await nth(T0, 4)).toBeUndefined()
  expect(await nth(T0 + 1, 3)).toBeUndefined()
  expect(await storage().read((r) => r.fraud.nthLatestDebit(accountId, T0, 1))).toBe(T0 + 7)
})

test('countryStats: every recorded send and its approvals by account and country after `since`, then by country in byte order', async () => {
  await sortByLocale('fraud_sends', ['country'])
  const { accountId } = await accountWithKey(storage(), 'acme')
  await record(
    send(1, { at: T0 + 1 }),
    send(2, { at: T0 + 2, counted: false }),
    send(3, { at: T0 + 3, country: 'KZ', prefix: '+7701' }),
    send(4, { at: T0 + 4, country: 'AM', prefix: '+374' }),
    send(5, { at: T0 + 5, accountId }),
    send(6, { at: T0 }),
    // Not a country code, but stored as given: its lower case sorts after every capital in byte order.
    send(7, { at: T0 + 6, country: 'ad', prefix: '+376' }),
  )
  await storage().write((r) => r.fraud.approved(2, T0 + 10))
  expect(await storage().read((r) => r.fraud.countryStats(undefined, T0))).toEqual([
    { accountId: DEFAULT_ACCOUNT, country: 'UZ', sends: 2, approved: 1 },
    { accountId: DEFAULT_ACCOUNT, country: 'AM', sends: 1, approved: 0 },
    { accountId: DEFAULT_ACCOUNT, country: 'KZ', sends: 1, approved: 0 },
    { accountId: DEFAULT_ACCOUNT, country: 'ad', sends: 1, approved: 0 },
    { accountId, country: 'UZ', sends: 1, approved: 0 },
  ])
  expect(await storage().read((r) => r.fraud.countryStats(accountId, 0))).toEqual([{ accountId, country: 'UZ', sends: 1, approved: 0 }])
})

describe('guardReads (rules 2 to 4 at once)', () => {
  const at = (m: number, s = 0) => T0 + m * MINUTE + s * 1000
  const windows = [null, { from: at(0, 10), to: at(0, 49) }, { from: at(0, 11), to: at(1, 30) }, { from: at(0), to: at(3, 58) }, { from: at(1), to: at(9) }]
  /** The prefix's block is kept under the prefix in clear, its sends under its counting key (otp/fraud.ts prefixKey). */
  const KEY = 'key-of-99890'
  const query = (o: { ip?: boolean; provenAfter?: number; prefix?: boolean; country?: number; pre?: number; name?: string }): GuardReadsQuery => ({
    accountId: DEFAULT_ACCOUNT,
    country: o.name ?? 'UZ',
    ip: o.ip ? { hash: hash('ip-1'), since: at(0, 20) } : null,
    countrySince: at(0, 20),
    provenAfter: o.provenAfter ?? at(9),
    scopes: [
      { kind: 'country', scope: o.name ?? 'UZ', counted: o.name ?? 'UZ', window: windows[o.country ?? 0]! },
      ...(o.prefix ? [{ kind: 'prefix' as const, scope: '+99890', counted: KEY, window: windows[o.pre ?? 0]! }] : []),
    ],
  })

  test('answers what the reads one by one answer: every window, with or without an IP and a prefix, a country with no sends or approval', async () => {
    await record(
      send(1, { at: at(0, 10), prefix: KEY }),
      send(2, { at: at(0, 50), prefix: KEY }),
      send(3, { at: at(1, 30), prefix: 'key-of-99891' }),
      send(4, { at: at(2, 0), prefix: KEY }),
      send(5, { at: at(3, 59), prefix: KEY, ipHash: hash('ip-2') }),
      send(6, { at: at(1, 0), prefix: KEY, counted: false }),
    )
    const countryBlock: BlockRow = { accountId: DEFAULT_ACCOUNT, kind: 'country', scope: 'UZ', startedAt: null, until: null, level: 2, countsFrom: at(0, 30) }
    const prefixBlock: BlockRow = { accountId: DEFAULT_ACCOUNT, kind: 'prefix', scope: '+99890', startedAt: T0, until: at(15), level: 1, countsFrom: at(0, 5) }
    await storage().write(async (r) => {
      await r.fraud.approved(1, at(9))
      await r.fraud.approved(4, at(9))
      await r.fraud.saveBlock(countryBlock)
      await r.fraud.saveBlock(prefixBlock)
    })
    const oneByOne = (q: GuardReadsQuery) =>
      storage().write(async (r) => ({
        ipTimes: q.ip && (await r.fraud.ipSendTimes(q.ip.hash, q.ip.since)),
        lastApproval: await r.fraud.lastApproval(q.accountId, q.country),
        // Not after provenAfter: unproven, so read.
        countryTimes: await r.fraud.countrySendTimes(q.accountId, q.country, q.countrySince),
        scopes: await Promise.all(
          q.scopes.map(async (s) => ({
            block: await r.fraud.block(q.accountId, s.kind, s.scope),
            conversion: s.window && (await r.fraud.conversion(q.accountId, s.kind, s.counted, s.window.from, s.window.to)),
          })),
        ),
      }))
    for (const name of ['UZ', 'KZ'])
      for (const ip of [false, true])
        for (const prefix of [false, true])
          for (let country = 0; country < windows.length; country++) {
            const q = query({ ip, prefix, country, pre: windows.length - 1 - country, name })
            expect(await storage().write((r) => r.fraud.guardReads(q))).toEqual(await oneByOne(q))
          }
    // KZ: no approval, no sends, no block; an IP's hour with none of its sends.
    expect(await storage().write((r) => r.fraud.guardReads({ ...query({ name: 'KZ', country: 4 }), ip: { hash: hash('ip-3'), since: 0 } }))).toEqual({
      ipTimes: [],
      lastApproval: null,
      countryTimes: [],
      scopes: [{ block: undefined, conversion: { sends: 0, approved: 0 } }],
    })
    const one = await storage().write((r) => r.fraud.guardReads(query({ ip: true, prefix: true, country: 4, pre: 2 })))
    expect(one).toEqual({
      ipTimes: [at(0, 50), at(1, 30), at(2, 0)],
      lastApproval: at(9),
      countryTimes: [at(0, 50), at(1, 30), at(2, 0), at(3, 59)],
      scopes: [
        { block: countryBlock, conversion: { sends: 3, approved: 1 } },
        { block: prefixBlock, conversion: { sends: 1, approved: 0 } },
      ],
    })
  })

  test('a country approved after `provenAfter` is proven: its hour of sends is not read (on PostgreSQL its index is never scanned)', async () => {
    await record(send(1, { at: at(0, 30) }), send(2, { at: at(1) }))
    await storage().write((r) => r.fraud.approved(1, at(2)))
    const read = (provenAfter: number) => storage().write((r) => r.fraud.guardReads(query({ provenAfter })))
    expect((await read(at(2) - 1)).countryTimes).toBeNull()
    expect((await read(at(2))).countryTimes).toEqual([at(0, 30), at(1)])
    if (engine().name !== 'postgres') return
    // The loops of every plan node that reads the country's sends: none when proven.
    const loops = async (provenAfter: number) => {
      const plan = JSON.stringify((await engine().sql(`EXPLAIN (ANALYZE, FORMAT JSON) ${GUARD_READS}`, guardReadsParams(query({ provenAfter }))))[0])
      // Leaf scans of fraud_sends that select on the country (the planner may take either index for it).
      const scans = [...plan.matchAll(/\{[^{}]*"Relation Name":"fraud_sends"[^{}]*\}/g)].map((m) => m[0]).filter((n) => n.includes("country = 'UZ'"))
      return scans.map((n) => Number(/"Actual Loops":(\d+)/.exec(n)?.[1]))
    }
    const proven = await loops(at(2) - 1)
    expect(proven.length).toBeGreaterThan(0)
    expect(proven.every((n) => n === 0)).toBe(true)
    expect((await loops(at(2))).some((n) => n > 0)).toBe(true)
  })
})
