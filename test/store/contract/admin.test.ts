/**
 * AdminRepo contract: accounts, keys and the ledger as the operator sees
 * them (`otpd accounts`, `otpd keys`, `otpd credits history`), the same on
 * every engine.
 */
import { expect, test } from 'bun:test'
import { DEFAULT_ACCOUNT, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

test('accounts: inserted with no code length and no balance, found by name, listed by id', async () => {
  const zeta = await storage().write((r) => r.admin.insertAccount('zeta', T0))
  const acme = await storage().write((r) => r.admin.insertAccount('acme', T0))
  expect(acme).toEqual({ id: acme.id, name: 'acme', codeLength: null, balance: 0, createdAt: T0 })
  expect(await storage().read((r) => r.admin.findAccount('acme'))).toEqual(acme)
  expect(await storage().read((r) => r.admin.findAccount('nobody'))).toBeUndefined()
  await storage().write((r) => r.admin.setCodeLength(acme.id, 7))
  const all = await storage().read((r) => r.admin.listAccounts())
  expect(all.map((a) => [a.id, a.name, a.codeLength])).toEqual([
    [DEFAULT_ACCOUNT, 'default', null],
    [zeta.id, 'zeta', null],
    [acme.id, 'acme', 7],
  ])
})

test('a second account of the same name is refused by the engine', async () => {
  await storage().write((r) => r.admin.insertAccount('acme', T0))
  await expect(storage().write((r) => r.admin.insertAccount('acme', T0))).rejects.toThrow()
  expect((await storage().read((r) => r.admin.listAccounts())).map((a) => a.name)).toEqual(['default', 'acme'])
})

test('keys: listed with their account by id, per account, and set disabled or revoked', async () => {
  const acme = await storage().write((r) => r.admin.insertAccount('acme', T0))
  const ids = await storage().write(async (r) => [
    await r.admin.insertKey({ accountId: DEFAULT_ACCOUNT, name: 'one', prefix: 'pk_1', keyHash: 'h1', at: T0 }),
    await r.admin.insertKey({ accountId: acme.id, name: 'two', prefix: 'pk_2', keyHash: 'h2', at: T0 + 1 }),
  ])
  expect(ids[1]).toBeGreaterThan(ids[0]!)
  await storage().write((r) => r.admin.setKeyStatus(ids[1]!, 'disabled'))
  expect(await storage().read((r) => r.admin.listKeys())).toEqual([
    { id: ids[0]!, account: 'default', name: 'one', prefix: 'pk_1', status: 'active', createdAt: T0, lastUsedAt: null, expiresAt: null },
    { id: ids[1]!, account: 'acme', name: 'two', prefix: 'pk_2', status: 'disabled', createdAt: T0 + 1, lastUsedAt: null, expiresAt: null },
  ])
  expect((await storage().read((r) => r.admin.listKeys(acme.id))).map((k) => k.id)).toEqual([ids[1]!])
})

test('findKeys: by prefix, or by id, where an id wins over a prefix of the same digits', async () => {
  const [a, b] = await storage().write(async (r) => [
    await r.admin.insertKey({ accountId: DEFAULT_ACCOUNT, name: 'a', prefix: 'pk_a', keyHash: 'ha', at: T0 }),
    await r.admin.insertKey({ accountId: DEFAULT_ACCOUNT, name: 'b', prefix: 'pk_b', keyHash: 'hb', at: T0 }),
  ])
  // A key whose prefix is the other's id in digits.
  const c = await storage().write((r) => r.admin.insertKey({ accountId: DEFAULT_ACCOUNT, name: 'c', prefix: String(a), keyHash: 'hc', at: T0 }))
  const find = (ref: string) => storage().read(async (r) => (await r.admin.findKeys(ref)).map((k) => k.id))
  expect(await find('pk_b')).toEqual([b!])
  expect(await find(String(b))).toEqual([b!])
  expect(await find(String(a))).toEqual([a!])
  expect(await find(String(c))).toEqual([c])
  expect(await find('pk_none')).toEqual([])
  expect(await find('999999')).toEqual([])
})

test("ledger: the account's rows, newest first, at most `limit`", async () => {
  const acme = await storage().write((r) => r.admin.insertAccount('acme', T0))
  await storage().write(async (r) => {
    for (let i = 1; i <= 3; i++) await r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'grant', amount: i, at: T0 + i })
    await r.credits.post({ accountId: acme.id, kind: 'grant', amount: 9, at: T0 })
  })
  expect((await storage().read((r) => r.admin.ledger(DEFAULT_ACCOUNT, 2))).map((l) => l.amount)).toEqual([3, 2])
  expect((await storage().read((r) => r.admin.ledger(acme.id, 10))).map((l) => l.amount)).toEqual([9])
  // The next page: older than the last row shown.
  const first = await storage().read((r) => r.admin.ledger(DEFAULT_ACCOUNT, 2))
  const next = await storage().read((r) => r.admin.ledger(DEFAULT_ACCOUNT, 2, first.at(-1)!.id))
  expect(next.map((l) => l.amount).slice(0, 1)).toEqual([1])
  expect(next.every((l) => l.id < first.at(-1)!.id)).toBe(true)
})
