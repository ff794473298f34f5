/**
 * CreditStore contract: the balance and its ledger move together, and a
 * debit never takes a balance below zero, the same on every engine.
 */
import { expect, test } from 'bun:test'
import { accountWithKey, DEFAULT_ACCOUNT, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

const balance = (accountId = DEFAULT_ACCOUNT) => storage().read((r) => r.credits.balance(accountId))
const ledger = (accountId = DEFAULT_ACCOUNT) => storage().read((r) => r.admin.ledger(accountId, 100))

test('post appends a ledger row and moves the balance in step: grants and refunds add, debits take', async () => {
  expect(await balance()).toBe(0)
  await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'grant', amount: 5, note: 'top up', at: T0 }))
  await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'debit', amount: 2, verificationId: 'v-1', at: T0 + 1 }))
  await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'refund', amount: 1, verificationId: 'v-1', at: T0 + 2 }))
  expect(await balance()).toBe(4)
  expect((await ledger()).map(({ id: _, ...row }) => row)).toEqual([
    { kind: 'refund', amount: 1, verificationId: 'v-1', note: null, createdAt: T0 + 2 },
    { kind: 'debit', amount: 2, verificationId: 'v-1', note: null, createdAt: T0 + 1 },
    { kind: 'grant', amount: 5, verificationId: null, note: 'top up', createdAt: T0 },
  ])
})

test('debit takes credits the balance covers, to exactly zero, and writes its ledger row', async () => {
  await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'grant', amount: 2, at: T0 }))
  expect(await storage().write((r) => r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 1, verificationId: 'v-1', at: T0 + 1 }))).toBe(true)
  expect(await storage().write((r) => r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 1, verificationId: 'v-2', at: T0 + 2 }))).toBe(true)
  expect(await balance()).toBe(0)
  expect((await ledger()).map((l) => [l.kind, l.amount, l.verificationId, l.createdAt])).toEqual([
    ['debit', 1, 'v-2', T0 + 2],
    ['debit', 1, 'v-1', T0 + 1],
    ['grant', 2, null, T0],
  ])
})

test('debit is refused when the balance does not cover it: no ledger row, the balance unchanged', async () => {
  await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'grant', amount: 2, at: T0 }))
  expect(await storage().write((r) => r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 3, verificationId: 'v-1', at: T0 + 1 }))).toBe(false)
  expect(await balance()).toBe(2)
  expect((await ledger()).map((l) => l.kind)).toEqual(['grant'])
  // An empty account, and another account's credits, cover nothing.
  const { accountId } = await accountWithKey(storage(), 'acme')
  expect(await storage().write((r) => r.credits.debit({ accountId, amount: 1, verificationId: 'v-2', at: T0 + 2 }))).toBe(false)
  expect(await balance(accountId)).toBe(0)
  expect(await ledger(accountId)).toEqual([])
})

test('debits in one transaction see each other: the second one the balance no longer covers is refused', async () => {
  await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'grant', amount: 1, at: T0 }))
  const results = await storage().write(async (r) => [
    await r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 1, verificationId: 'v-1', at: T0 + 1 }),
    await r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 1, verificationId: 'v-2', at: T0 + 1 }),
  ])
  expect(results).toEqual([true, false])
  expect(await balance()).toBe(0)
})

test('a write decides on a refused debit and keeps only what it decided then: nothing of what it did while the debit was unanswered', async () => {
  await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'grant', amount: 1, at: T0 }))
  const { accountId } = await accountWithKey(storage(), 'acme')
  await storage().write((r) => r.credits.post({ accountId, kind: 'grant', amount: 5, at: T0 }))
  // An engine may answer a debit before it is decided (PostgreSQL sends it pipelined): the
  // grant written after a debit answered true must not stay when the debit was in fact refused.
  const answers = await storage().write(async (r) => {
    const first = await r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 1, verificationId: 'v-1', at: T0 + 1 })
    const second = await r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 1, verificationId: 'v-2', at: T0 + 2 })
    await r.credits.post({ accountId, kind: second ? 'grant' : 'refund', amount: 1, note: second ? 'both debited' : 'second refused', at: T0 + 3 })
    return [first, second]
  })
  expect(answers).toEqual([true, false])
  expect(await balance()).toBe(0)
  expect((await ledger()).map((l) => [l.kind, l.verificationId])).toEqual([
    ['debit', 'v-1'],
    ['grant', null],
  ])
  expect(await balance(accountId)).toBe(6)
  expect((await ledger(accountId)).map((l) => [l.kind, l.note])).toEqual([
    ['refund', 'second refused'],
    ['grant', null],
  ])
})

test('a debit that needs more than any one row of the balance takes it from the total, on every engine', async () => {
  // 20 credits granted one at a time land on different rows where the engine spreads them (PostgreSQL: 16).
  for (let i = 0; i < 20; i++) await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'grant', amount: 1, at: T0 }))
  expect(await storage().write((r) => r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 19, verificationId: 'v-1', at: T0 + 1 }))).toBe(true)
  expect(await balance()).toBe(1)
  expect(await storage().write((r) => r.credits.debit({ accountId: DEFAULT_ACCOUNT, amount: 2, verificationId: 'v-2', at: T0 + 2 }))).toBe(false)
  expect(await balance()).toBe(1)
  expect((await ledger()).filter((l) => l.kind === 'debit').map((l) => [l.amount, l.verificationId])).toEqual([[19, 'v-1']])
})

test('an unknown account has no balance', async () => {
  expect(await balance(9999)).toBe(0)
})

test('codeLength is null until the operator sets one, then that length', async () => {
  const { accountId } = await accountWithKey(storage(), 'acme')
  expect(await storage().write((r) => r.credits.codeLength(accountId))).toBeNull()
  await storage().write((r) => r.admin.setCodeLength(accountId, 8))
  expect(await storage().write((r) => r.credits.codeLength(accountId))).toBe(8)
  expect(await storage().read((r) => r.credits.codeLength(DEFAULT_ACCOUNT))).toBeNull()
})
