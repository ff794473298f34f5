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
