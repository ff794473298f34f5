/**
 * KeyStore and the rolling-window logs (KeyHitLog, the recipient failure
 * log) contract: what authentication, the per-key limit and the recipient
 * failure cap read, the same on every engine.
 */
import { describe, expect, test } from 'bun:test'
import type { EventLog } from '../../../src/otp/ports/index.ts'
import type { Repos } from '../../../src/otp/ports/index.ts'
import { ON_PG } from '../../kit/harness.ts'
import { accountWithKey, DEFAULT_ACCOUNT, defaultKey, hash, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

describe('KeyStore', () => {
  test('findByPrefix answers every key with that prefix, with its account, status and hash', async () => {
    const key = await defaultKey(storage(), 'pk_one')
    const { accountId, keyId } = await accountWithKey(storage(), 'acme', 'pk_two')
    expect(await storage().read((r) => r.keys.findByPrefix('pk_one'))).toEqual([
      { id: key, accountId: DEFAULT_ACCOUNT, prefix: 'pk_one', status: 'active', keyHash: 'hash-of-pk_one', expiresAt: null },
    ])
    await storage().write((r) => r.admin.setKeyStatus(keyId, 'revoked'))
    expect(await storage().read((r) => r.keys.findByPrefix('pk_two'))).toEqual([
      { id: keyId, accountId, prefix: 'pk_two', status: 'revoked', keyHash: 'hash-of-pk_two', expiresAt: null },
    ])
    expect(await storage().read((r) => r.keys.findByPrefix('pk_none'))).toEqual([])
  })

  test('setKeyExpiry: the time a rotated key stops working, read back by findByPrefix and listKeys', async () => {
    const key = await defaultKey(storage(), 'pk_rot')
    await storage().write((r) => r.admin.setKeyExpiry(key, T0 + 86_400_000))
    expect((await storage().read((r) => r.keys.findByPrefix('pk_rot')))[0]!.expiresAt).toBe(T0 + 86_400_000)
    expect((await storage().read((r) => r.admin.listKeys())).find((k) => k.id === key)!.expiresAt).toBe(T0 + 86_400_000)
  })

  test('touch records when the key was last used', async () => {
    const key = await defaultKey(storage())
    const other = await defaultKey(storage(), 'pk_other')
    await storage().write((r) => r.keys.touch(key, T0 + 5))
    const keys = await storage().read((r) => r.admin.listKeys())
    expect(keys.map((k) => [k.id, k.lastUsedAt])).toEqual([
      [key, T0 + 5],
      [other, null],
    ])
  })
})

/**
 * Both logs answer the same contract: the n-th most recent event of a
 * subject. `seenInside`: a time recorded counts in its own transaction too
 * (a key's hit is recorded at COMMIT on PostgreSQL: it counts after it).
 */
function windowCases<S>(name: string, log: (r: Repos) => EventLog<S>, subjects: () => Promise<[S, S]>, seenInside: boolean) {
  describe(name, () => {
    test('nthLatest is the n-th most recent time of the subject, none while it has fewer than n', async () => {
      const [a, b] = await subjects()
      const nth = (s: S, n: number) => storage().write((r) => log(r).nthLatest(s, n))
      expect(await nth(a, 1)).toBeUndefined()
      for (const at of [T0 + 1, T0 + 2, T0 + 3]) await storage().write((r) => log(r).record(a, at))
      await storage().write((r) => log(r).record(b, T0 + 9))
      expect(await nth(a, 1)).toBe(T0 + 3)
      expect(await nth(a, 2)).toBe(T0 + 2)
      expect(await nth(a, 3)).toBe(T0 + 1)
      expect(await nth(a, 4)).toBeUndefined()
      expect(await nth(b, 1)).toBe(T0 + 9)
      expect(await nth(b, 2)).toBeUndefined()
    })

    test.if(seenInside)('a time recorded in a transaction counts in that transaction and after it', async () => {
      const [a] = await subjects()
      const seen = await storage().write(async (r) => {
        await log(r).record(a, T0 + 1)
        await log(r).record(a, T0 + 2)
        return [await log(r).nthLatest(a, 1), await log(r).nthLatest(a, 2)]
      })
      expect(seen).toEqual([T0 + 2, T0 + 1])
      expect(await storage().read((r) => log(r).nthLatest(a, 2))).toBe(T0 + 1)
    })

    test('times recorded in one transaction count after it, in order', async () => {
      const [a] = await subjects()
      await storage().write(async (r) => {
        await log(r).record(a, T0 + 1)
        await log(r).record(a, T0 + 2)
      })
      expect(await storage().read((r) => log(r).nthLatest(a, 1))).toBe(T0 + 2)
      expect(await storage().read((r) => log(r).nthLatest(a, 2))).toBe(T0 + 1)
    })

    test('a transaction that fails records nothing', async () => {
      const [a] = await subjects()
      await storage().write((r) => log(r).record(a, T0 + 1))
      const failing = storage().write(async (r) => {
        await log(r).record(a, T0 + 2)
        throw new Error('rolled back (test)')
      })
      await expect(failing).rejects.toThrow('rolled back (test)')
      expect(await storage().write((r) => log(r).nthLatest(a, 1))).toBe(T0 + 1)
      await storage().write((r) => log(r).record(a, T0 + 3))
      expect(await storage().write((r) => log(r).nthLatest(a, 2))).toBe(T0 + 1)
    })
  })
}

windowCases(
  'KeyHitLog (per-key window)',
  (r) => r.keyHits,
  async () => [await defaultKey(storage(), 'pk_a'), await defaultKey(storage(), 'pk_b')],
  !ON_PG,
)
windowCases(
  'recipient failure log',
  (r) => r.failures,
  async () => [hash('alice'), hash('bob')],
  true,
)

describe('KeyHitLog admission', () => {
  test('two writes that both see room for the last hit: one records it, the other runs again and sees the window full', async () => {
    const key = await defaultKey(storage(), 'pk_race')
    const room = { max: 1, windowMs: 60_000 }
    let runs = 0
    // Both first runs read before either records (a barrier), whatever the machine's load.
    let arrived = 0
    let open = () => {}
    const barrier = new Promise<void>((r) => (open = r))
    const admit = () =>
      storage().write(async (r) => {
        const run = ++runs
        const full = (await r.keyHits.nthLatest(key, 1)) !== undefined
        if (run <= 2 && ++arrived === 2) open()
        if (run <= 2 && ON_PG) await barrier
        if (full) return 'full'
        await r.keyHits.record(key, T0, room)
        return 'admitted'
      })
    expect((await Promise.all([admit(), admit()])).sort()).toEqual(['admitted', 'full'])
    expect(await storage().read((r) => r.keyHits.nthLatest(key, 1))).toBe(T0)
    expect(await storage().read((r) => r.keyHits.nthLatest(key, 2))).toBeUndefined()
    // SQLite's single writer runs them one after the other; PostgreSQL runs the second again.
    expect(runs).toBe(ON_PG ? 3 : 2)
  })
})

describe('recipient failure log: nthLatestPair', () => {
  test('the n-th and (n-1)-th most recent times in one look-up, undefined where the subject has fewer', async () => {
    const [a, b] = [hash('pair-a'), hash('pair-b')]
    const pair = (s: Uint8Array, n: number) => storage().write((r) => r.failures.nthLatestPair(s, n))
    expect(await pair(a, 1)).toEqual({ nth: undefined, previous: undefined })
    expect(await pair(a, 3)).toEqual({ nth: undefined, previous: undefined })
    for (const at of [T0 + 1, T0 + 2, T0 + 3]) await storage().write((r) => r.failures.record(a, at))
    await storage().write((r) => r.failures.record(b, T0 + 9))
    expect(await pair(a, 1)).toEqual({ nth: T0 + 3, previous: undefined })
    expect(await pair(a, 2)).toEqual({ nth: T0 + 2, previous: T0 + 3 })
    expect(await pair(a, 3)).toEqual({ nth: T0 + 1, previous: T0 + 2 })
    expect(await pair(a, 4)).toEqual({ nth: undefined, previous: T0 + 1 })
    expect(await pair(a, 5)).toEqual({ nth: undefined, previous: undefined })
    expect(await pair(b, 2)).toEqual({ nth: undefined, previous: T0 + 9 })
  })

  test('agrees with nthLatest, including a time recorded in the same transaction', async () => {
    const a = hash('pair-c')
    const seen = await storage().write(async (r) => {
      await r.failures.record(a, T0 + 5)
      await r.failures.record(a, T0 + 7)
      return [await r.failures.nthLatestPair(a, 2), await r.failures.nthLatest(a, 2), await r.failures.nthLatest(a, 1)]
    })
    expect(seen).toEqual([{ nth: T0 + 5, previous: T0 + 7 }, T0 + 5, T0 + 7])
  })
})
