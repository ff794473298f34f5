/**
 * HookKeyStore contract (otp/ports/hooks.ts): a hook's key is found by the
 * hook's name, added once (a second add, as from another node, finds the
 * first), moved to another account, and listed with its last use; an
 * operator's key is never listed. The same on every engine.
 */
import { expect, test } from 'bun:test'
import { accountWithKey, DEFAULT_ACCOUNT, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

test('added once, found by name, moved, listed with its last use', async () => {
  const s = storage()
  expect(await s.read((r) => r.hookKeys.find('supabase'))).toBeUndefined()
  const id = await s.write((r) => r.hookKeys.insert({ hook: 'supabase', accountId: DEFAULT_ACCOUNT, keyHash: 'hook:a', at: T0 }))
  // A second add of the same hook (another node) answers the first's id and adds nothing.
  expect(await s.write((r) => r.hookKeys.insert({ hook: 'supabase', accountId: DEFAULT_ACCOUNT, keyHash: 'hook:b', at: T0 }))).toBe(id)
  expect(await s.read((r) => r.hookKeys.find('supabase'))).toEqual({ id, hook: 'supabase', accountId: DEFAULT_ACCOUNT, status: 'active', lastUsedAt: null })

  const { accountId } = await accountWithKey(s, 'acme')
  await s.write((r) => r.hookKeys.moveTo(id, accountId))
  await s.write((r) => r.keys.touch(id, T0 + 5))
  await s.write((r) => r.admin.setKeyStatus(id, 'disabled'))
  expect((await s.read((r) => r.hookKeys.find('supabase')))?.status).toBe('disabled')
  await s.write((r) => r.hookKeys.insert({ hook: 'logto', accountId: DEFAULT_ACCOUNT, keyHash: 'hook:c', at: T0 }))
  expect((await s.read((r) => r.hookKeys.list())).map((k) => [k.hook, k.accountId, k.lastUsedAt])).toEqual([
    ['logto', DEFAULT_ACCOUNT, null],
    ['supabase', accountId, T0 + 5],
  ])
})
