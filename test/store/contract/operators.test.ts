/**
 * OperatorRepo contract: console operators, their sessions and the failed
 * sign-in windows (docs/console.md#security-model), the same on every engine.
 */
import { expect, test } from 'bun:test'
import { hash, MINUTE, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

test('operators: inserted active, found by name, listed by id; status and password change', async () => {
  const zed = await storage().write((r) => r.operators.insertOperator({ name: 'zed', passwordHash: 'h-zed', role: 'admin', at: T0 }))
  const amy = await storage().write((r) => r.operators.insertOperator({ name: 'amy', passwordHash: 'h-amy', role: 'viewer', at: T0 + 1 }))
  expect(amy).toEqual({
    id: amy.id,
    name: 'amy',
    passwordHash: 'h-amy',
    status: 'active',
    createdAt: T0 + 1,
    passwordChangedAt: T0 + 1,
    role: 'viewer',
    credentialGeneration: 0,
  })
  expect(await storage().read((r) => r.operators.findOperator('amy'))).toEqual(amy)
  expect(await storage().read((r) => r.operators.findOperator('nobody'))).toBeUndefined()
  await storage().write(async (r) => {
    await r.operators.setOperatorStatus(zed.id, 'disabled')
    await r.operators.setPassword(amy.id, 'h-amy-2', T0 + 5)
    await r.operators.setOperatorRole(amy.id, 'admin')
  })
  const all = await storage().read((r) => r.operators.listOperators())
  expect(all.map((o) => [o.name, o.status, o.passwordHash, o.passwordChangedAt, o.role])).toEqual([
    ['zed', 'disabled', 'h-zed', T0, 'admin'],
    ['amy', 'active', 'h-amy-2', T0 + 5, 'admin'],
  ])
})

test('the credential generation moves on at a password change and a disable, not at an enable or a role change', async () => {
  const amy = await storage().write((r) => r.operators.insertOperator({ name: 'amy', passwordHash: 'h', role: 'admin', at: T0 }))
  const generation = async () => (await storage().read((r) => r.operators.findOperator('amy')))!.credentialGeneration
  const steps: [string, (id: number) => Promise<void>, number][] = [
    ['password', (id) => storage().write((r) => r.operators.setPassword(id, 'h2', T0 + 1)), 1],
    ['disable', (id) => storage().write((r) => r.operators.setOperatorStatus(id, 'disabled')), 2],
    ['enable', (id) => storage().write((r) => r.operators.setOperatorStatus(id, 'active')), 2],
    ['role', (id) => storage().write((r) => r.operators.setOperatorRole(id, 'viewer')), 2],
  ]
  for (const [name, step, expected] of steps) {
    await step(amy.id)
    expect({ name, generation: await generation() }).toEqual({ name, generation: expected })
  }
})

test('a second operator of the same name is refused by the engine', async () => {
  await storage().write((r) => r.operators.insertOperator({ name: 'amy', passwordHash: 'h', role: 'admin', at: T0 }))
  await expect(storage().write((r) => r.operators.insertOperator({ name: 'amy', passwordHash: 'h', role: 'admin', at: T0 }))).rejects.toThrow()
})

test('sessions: found by token hash with their operator and its status; touched; deleted one, per operator, or when idle', async () => {
  const [amy, bob] = await storage().write(async (r) => [
    await r.operators.insertOperator({ name: 'amy', passwordHash: 'h', role: 'admin', at: T0 }),
    await r.operators.insertOperator({ name: 'bob', passwordHash: 'h', role: 'viewer', at: T0 }),
  ])
  await storage().write(async (r) => {
    await r.operators.insertSession({ tokenHash: hash('a1'), operatorId: amy!.id, generation: 0, at: T0 })
    await r.operators.insertSession({ tokenHash: hash('a2'), operatorId: amy!.id, generation: 0, at: T0 + MINUTE })
    await r.operators.insertSession({ tokenHash: hash('b1'), operatorId: bob!.id, generation: 0, at: T0 })
  })
  expect(await storage().read((r) => r.operators.findSession(hash('a1')))).toEqual({
    operatorId: amy!.id,
    operator: 'amy',
    operatorStatus: 'active',
    operatorRole: 'admin',
    operatorGeneration: 0,
    sessionGeneration: 0,
    createdAt: T0,
    lastSeenAt: T0,
  })
  expect(await storage().read((r) => r.operators.findSession(hash('none')))).toBeUndefined()
  await storage().write((r) => r.operators.touchSession(hash('a1'), T0 + 10 * MINUTE))
  expect((await storage().read((r) => r.operators.findSession(hash('a1'))))?.lastSeenAt).toBe(T0 + 10 * MINUTE)
  await storage().write((r) => r.operators.setOperatorStatus(bob!.id, 'disabled'))
  expect(await storage().read((r) => r.operators.findSession(hash('b1')))).toMatchObject({
    operatorStatus: 'disabled',
    operatorRole: 'viewer',
    operatorGeneration: 1,
    sessionGeneration: 0,
  })
  // Idle: last seen before T0 + 1 min (b1 only; a1 was touched, a2 is at the bound); none made before T0.
  expect(await storage().write((r) => r.operators.deleteIdleSessions(T0 + MINUTE, T0))).toBe(1)
  expect(await storage().read((r) => r.operators.findSession(hash('b1')))).toBeUndefined()
  // Past its lifetime: made before T0 + 1 min (a1, touched since, but made at T0).
  expect(await storage().write((r) => r.operators.deleteIdleSessions(T0, T0 + MINUTE))).toBe(1)
  expect(await storage().read((r) => r.operators.findSession(hash('a1')))).toBeUndefined()
  await storage().write((r) => r.operators.insertSession({ tokenHash: hash('a1'), operatorId: amy!.id, generation: 0, at: T0 + MINUTE }))
  await storage().write((r) => r.operators.deleteSession(hash('a2')))
  expect(await storage().read((r) => r.operators.findSession(hash('a2')))).toBeUndefined()
  await storage().write((r) => r.operators.insertSession({ tokenHash: hash('a3'), operatorId: amy!.id, generation: 0, at: T0 }))
  expect(await storage().write((r) => r.operators.deleteSessionsOf(amy!.id))).toBe(2)
  expect(await storage().read((r) => r.operators.findSession(hash('a1')))).toBeUndefined()
})

test('sign-in attempts: the n-th most recent per scope; one forgotten by id; old ones deleted', async () => {
  const ids = await storage().write(async (r) => {
    const out: number[] = []
    for (let i = 0; i < 4; i++) out.push(await r.operators.recordAttempt(hash('scope-a'), T0 + i * MINUTE))
    out.push(await r.operators.recordAttempt(hash('scope-b'), T0))
    return out
  })
  expect(new Set(ids).size).toBe(5)
  const nth = (scope: string, n: number) => storage().read((r) => r.operators.nthAttempt(hash(scope), n))
  expect(await nth('scope-a', 1)).toBe(T0 + 3 * MINUTE)
  expect(await nth('scope-a', 4)).toBe(T0)
  expect(await nth('scope-a', 5)).toBeUndefined()
  expect(await nth('scope-b', 1)).toBe(T0)
  await storage().write((r) => r.operators.forgetAttempt(ids[3]!))
  expect(await nth('scope-a', 1)).toBe(T0 + 2 * MINUTE)
  await storage().write((r) => r.operators.deleteAttemptsBefore(T0 + MINUTE))
  expect(await nth('scope-a', 2)).toBe(T0 + MINUTE)
  expect(await nth('scope-a', 3)).toBeUndefined()
  expect(await nth('scope-b', 1)).toBeUndefined()
})

test('attempts read and recorded in one write are exact under concurrency: at most `max` land in a window', async () => {
  const max = 3
  const attempt = () =>
    storage().write(async (r) => {
      const oldest = await r.operators.nthAttempt(hash('race'), max)
      if (oldest !== undefined) return false
      await r.operators.recordAttempt(hash('race'), T0)
      return true
    })
  const results = await Promise.all(Array.from({ length: 12 }, attempt))
  expect(results.filter(Boolean).length).toBe(max)
})
