/**
 * A session never outlives its operator's password reset or disabling
 * (docs/console.md#security-model): not one whose sign-in checked the old
 * password just before the change, not one created while the change ran, and
 * not an old cookie after disable then enable. And every session ends a fixed
 * time after its sign-in, however often it is used.
 */
import { expect, test } from 'bun:test'
import { Operators, SESSION_IDLE_MS, SESSION_MAX_MS, SIGN_IN_GUARD_WINDOW_MS } from '../../src/otp/operators.ts'
import type { Repos, Storage } from '../../src/otp/ports/index.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { type ConsoleHarness, consoleHarness, OPERATOR, PASSWORD, type Session } from '../kit/console.ts'

const SLOW = 60_000
const NEW_PASSWORD = 'a brand new password'

async function harness(): Promise<ConsoleHarness> {
  return closeAfterTest(await consoleHarness())
}

/** Whether a session's cookie still opens the console. */
async function alive(h: ConsoleHarness, session: Session): Promise<boolean> {
  return (await h.admin('/console/api/session', { session })).status === 200
}

/**
 * The harness's storage, with `between` run once just before the sign-in's
 * last write (the one that makes the session): the moment after the password
 * was checked and before the session exists.
 */
function storageWithPause(storage: Storage, between: () => Promise<void>): Storage {
  let writes = 0
  return {
    ...storage,
    write: async <T>(fn: (r: Repos) => Promise<T>): Promise<T> => {
      if (++writes === 2) await between()
      return storage.write(fn)
    },
    writeShared: (fn) => storage.writeShared(fn),
    read: (fn) => storage.read(fn),
    onStale: (l) => storage.onStale(l),
  }
}

test(
  'a sign-in whose password was checked just before a reset or a disable opens no session',
  async () => {
    const h = await harness()
    const changes: [string, () => Promise<unknown>][] = [
      [PASSWORD, () => h.server.operators.resetPassword(OPERATOR, NEW_PASSWORD)],
      [
        NEW_PASSWORD,
        async () => {
          await h.server.operators.disable(OPERATOR)
          await h.server.operators.enable(OPERATOR)
        },
      ],
    ]
    for (const [password, change] of changes) {
      const racing = new Operators(
        storageWithPause(h.server.storage, async () => {
          await change()
        }),
        h.server.hasher,
        h.clock,
      )
      const out = await racing.signIn(OPERATOR, password, '203.0.113.5')
      expect(out.ok).toBe(false)
      if (out.ok) expect(await h.server.operators.session(out.token)).toBeUndefined()
    }
  },
  SLOW,
)

test('a session whose operator changed credentials since its sign-in is dead, whether or not its row was deleted', async () => {
  const h = await harness()
  expect(await alive(h, h.session)).toBe(true)
  // As a reset on another node leaves a session whose insert committed after the reset's delete.
  await h.sql('UPDATE operators SET credential_generation = credential_generation + 1 WHERE name = $1', [OPERATOR])
  expect(await alive(h, h.session)).toBe(false)
})

test(
  'six clients signing in while the password is reset: no session made with the old password works after the reset',
  async () => {
    const h = await harness()
    let stop = false
    const sessions: Session[] = []
    const client = async () => {
      while (!stop) {
        const r = await h.admin('/console/api/session', { body: { name: OPERATOR, password: PASSWORD }, session: null })
        if (r.status !== 200) continue
        sessions.push({ cookie: /otpd_console=([^;]*)/.exec(r.headers.get('set-cookie')!)![1]!, csrf: r.json.csrf_token })
      }
    }
    const clients = Array.from({ length: 6 }, client)
    // Let some sign in before the reset, and keep them signing in across it.
    while (sessions.length < 6) await Bun.sleep(5)
    await h.server.operators.resetPassword(OPERATOR, NEW_PASSWORD)
    await Bun.sleep(200)
    stop = true
    await Promise.all(clients)
    const open = []
    for (const s of sessions) if (await alive(h, s)) open.push(s.cookie)
    expect({ made: sessions.length >= 6, open }).toEqual({ made: true, open: [] })
    // The old password's failures after the reset are counted: past their window, the new one works.
    h.clock.advance(SIGN_IN_GUARD_WINDOW_MS)
    await h.signIn(OPERATOR, NEW_PASSWORD)
  },
  SLOW,
)

test(
  'disable then enable while clients sign in: no cookie from before the disable works again',
  async () => {
    const h = await harness()
    const before: Session[] = []
    const signingIn = Array.from({ length: 20 }, async () => {
      try {
        before.push(await h.signIn())
      } catch {
        // Refused once the disable landed: what matters is that none made before it revives.
      }
    })
    await Bun.sleep(1)
    await h.server.operators.disable(OPERATOR)
    await Promise.all(signingIn)
    await h.server.operators.enable(OPERATOR)
    const open = []
    for (const s of [h.session, ...before]) if (await alive(h, s)) open.push(s.cookie)
    expect(open).toEqual([])
    h.clock.advance(SIGN_IN_GUARD_WINDOW_MS)
    expect(await alive(h, await h.signIn())).toBe(true)
  },
  SLOW,
)

test('a session ends 24 h after its sign-in however often it is used', async () => {
  const h = await harness()
  expect(SESSION_MAX_MS).toBe(24 * 3_600_000)
  const hour = 3_600_000
  for (const step of [SESSION_IDLE_MS - hour, SESSION_IDLE_MS - hour]) {
    h.clock.advance(step)
    expect(await alive(h, h.session)).toBe(true)
  }
  h.clock.advance(SESSION_MAX_MS - 2 * (SESSION_IDLE_MS - hour))
  expect(await alive(h, h.session)).toBe(false)
  expect(await alive(h, await h.signIn())).toBe(true)
})
