/**
 * An account's balance on PostgreSQL, spread over rows of `account_balances`
 * (docs/multi-node.md#an-accounts-balance): an account's debits do not wait
 * for one another's COMMIT, a refusal waits for every row's holder and is
 * decided on the committed total, a debit larger than one row takes from
 * several, and the balance is exact under concurrent debits and grants.
 */
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { Repos } from '../../src/otp/ports/index.ts'
import { BALANCE_STRIPES } from '../../src/store/pg/balances.ts'
import { applyMigrations } from '../../src/store/pg/migrate.ts'
import { ON_PG } from '../kit/harness.ts'
import { freshDatabase } from '../kit/pg-cluster.ts'
import { migrateUntil } from '../kit/pg-migrations.ts'
import { accountWithKey, DEFAULT_ACCOUNT, T0, useEngine } from '../store/contract/data.ts'

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void
  const opened = new Promise<void>((r) => {
    open = r
  })
  return { opened, open }
}

/** Whether `p` settles within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([p.then(() => true), Bun.sleep(ms).then(() => false)])
}

describe.skipIf(!ON_PG)('an account balance on PostgreSQL', () => {
  const engine = useEngine()
  const storage = () => engine().storage
  const rows = async (accountId = DEFAULT_ACCOUNT) =>
    (await engine().sql('SELECT stripe, balance FROM account_balances WHERE account_id = $1 ORDER BY stripe', [accountId])).map((r) => Number(r.balance))
  const balance = (accountId = DEFAULT_ACCOUNT) => storage().read((r) => r.credits.balance(accountId))
  const grant = (amount: number, accountId = DEFAULT_ACCOUNT) => storage().write((r) => r.credits.post({ accountId, kind: 'grant', amount, at: T0 }))
  const debit = (r: Repos, amount = 1, accountId = DEFAULT_ACCOUNT) => r.credits.debit({ accountId, amount, verificationId: null as never, at: T0 + 1 })

  test('every account has all its rows from the start, and a grant spreads over them', async () => {
    expect(await rows()).toEqual(Array(BALANCE_STRIPES).fill(0))
    const { accountId } = await accountWithKey(storage(), 'acme')
    expect(await rows(accountId)).toEqual(Array(BALANCE_STRIPES).fill(0))
    await grant(35, accountId)
    const spread = await rows(accountId)
    expect(spread.reduce((a, b) => a + b, 0)).toBe(35)
    expect(spread.filter((b) => b === 3)).toHaveLength(35 % BALANCE_STRIPES)
    expect(spread.filter((b) => b === 2)).toHaveLength(BALANCE_STRIPES - (35 % BALANCE_STRIPES))
    expect(await balance(accountId)).toBe(35)
    expect((await storage().read((r) => r.admin.findAccount('acme')))?.balance).toBe(35)
    expect(await balance()).toBe(0)
  })

  /** A write that has debited one credit and keeps its transaction open until `release`; with `rollBack`, it then throws. */
  const heldDebit = async (rollBack = false) => {
    const held = gate()
    const debited = gate()
    const done = storage().write(async (r) => {
      expect(await debit(r)).toBe(true)
      debited.open()
      await held.opened
      if (rollBack) throw new Error('rolled back')
    })
    await debited.opened
    return { done, release: held.open }
  }

  test("a debit does not wait for another's COMMIT on the same account", async () => {
    await grant(10)
    const first = await heldDebit()
    // With one row per account this debit waited for `first` to end.
    const second = storage().write((r) => debit(r))
    expect(await settlesWithin(second, 3_000)).toBe(true)
    expect(await second).toBe(true)
    first.release()
    await first.done
    expect(await balance()).toBe(8)
  })

  for (const outcome of ['commits', 'rolls back'] as const) {
    test(`a refusal waits for the holder of the last credit, and is decided on what it left: the holder ${outcome}`, async () => {
      await grant(1)
      const first = await heldDebit(outcome === 'rolls back')
      const second = storage().write((r) => debit(r))
      // No free row covers it, so it waits for every row's holder before it answers.
      expect(await settlesWithin(second, 500)).toBe(false)
      first.release()
      if (outcome === 'rolls back') await expect(first.done).rejects.toThrow('rolled back')
      else await first.done
      expect(await second).toBe(outcome === 'rolls back')
      expect(await balance()).toBe(0)
      const ledger = await storage().read((r) => r.admin.ledger(DEFAULT_ACCOUNT, 10))
      expect(ledger.map((l) => l.kind)).toEqual(['debit', 'grant'])
    })
  }

  test('a debit larger than any one row takes from several; one the total does not cover moves nothing', async () => {
    await grant(BALANCE_STRIPES)
    expect(await rows()).toEqual(Array(BALANCE_STRIPES).fill(1))
    expect(await storage().write((r) => debit(r, 10))).toBe(true)
    expect(await balance()).toBe(BALANCE_STRIPES - 10)
    expect((await rows()).every((b) => b >= 0)).toBe(true)
    expect(await storage().write((r) => debit(r, BALANCE_STRIPES - 9))).toBe(false)
    expect(await balance()).toBe(BALANCE_STRIPES - 10)
    const ledger = await storage().read((r) => r.admin.ledger(DEFAULT_ACCOUNT, 10))
    expect(ledger.map((l) => [l.kind, l.amount])).toEqual([
      ['debit', 10],
      ['grant', BALANCE_STRIPES],
    ])
  })

  test('concurrent debits and grants: every credit granted is taken once, never more, and no row goes below zero', async () => {
    await grant(40)
    const debits = Array.from({ length: 200 }, () => storage().write((r) => debit(r)))
    const grants = Array.from({ length: 10 }, () => grant(1))
    const taken = (await Promise.all(debits)).filter(Boolean).length
    await Promise.all(grants)
    const left = await balance()
    expect(taken + left).toBe(50)
    expect(taken).toBeGreaterThanOrEqual(40)
    expect((await rows()).every((b) => b >= 0)).toBe(true)
    const debited = await engine().sql("SELECT count(*) AS n FROM credit_ledger WHERE kind = 'debit'")
    expect(Number(debited[0]!.n)).toBe(taken)
  })

  test('a debit posted as a ledger entry is taken from the first row, and the total is what is read', async () => {
    await grant(BALANCE_STRIPES)
    await storage().write((r) => r.credits.post({ accountId: DEFAULT_ACCOUNT, kind: 'debit', amount: 3, note: 'correction', at: T0 + 2 }))
    expect((await rows())[0]).toBe(-2)
    expect(await balance()).toBe(BALANCE_STRIPES - 3)
    // The signedIn debit decides on the total, whatever one row holds.
    expect(await storage().write((r) => debit(r, BALANCE_STRIPES - 2))).toBe(false)
    expect(await storage().write((r) => debit(r, BALANCE_STRIPES - 3))).toBe(true)
    expect(await balance()).toBe(0)
  })
})

describe.skipIf(!ON_PG)('the migration to rows of the balance', () => {
  test("each account's balance is spread over all its rows, the total unchanged", async () => {
    const url = await freshDatabase('balance_migration')
    const sql = new SQL(url)
    try {
      await migrateUntil(sql, '0007_balance_stripes')
      await sql.unsafe("INSERT INTO accounts (name, balance, created_at) VALUES ('acme', 1000003, 0), ('empty', 0, 0)")
      await sql.unsafe("UPDATE accounts SET balance = 7 WHERE name = 'default'")

      await applyMigrations(sql, 'test')

      const spread = (await sql.unsafe(
        'SELECT a.name, count(*)::int AS n, sum(b.balance)::bigint AS total, min(b.balance)::bigint AS least, max(b.balance)::bigint AS most FROM accounts a JOIN account_balances b ON b.account_id = a.id GROUP BY a.name ORDER BY a.name',
      )) as { name: string; n: number; total: string; least: string; most: string }[]
      expect(spread.map((s) => [s.name, s.n, Number(s.total), Number(s.most) - Number(s.least)])).toEqual([
        ['acme', BALANCE_STRIPES, 1000003, 1],
        ['default', BALANCE_STRIPES, 7, 1],
        ['empty', BALANCE_STRIPES, 0, 0],
      ])
      const columns = await sql.unsafe("SELECT 1 FROM information_schema.columns WHERE table_name = 'accounts' AND column_name = 'balance'")
      expect(columns).toHaveLength(0)
    } finally {
      await sql.close()
    }
  })
})
