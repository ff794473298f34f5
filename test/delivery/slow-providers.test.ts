/**
 * Slow providers (docs/delivery.md#slow-providers): each provider's slots
 * (`max_in_flight`, a wait for a slot within the attempt's time), its own
 * `timeout_ms`, and its circuit (open after consecutive failures or timeouts,
 * skipped for the cool-down on the injected clock, then one probe).
 */
import { expect, test } from 'bun:test'
import { resolveConfig } from '../../src/config/load.ts'
import { guardSettingsOf } from '../../src/delivery/guard-settings.ts'
import type { GuardSettings } from '../../src/delivery/provider-guard.ts'
import { checkProviders } from '../../src/delivery/registry.ts'
import { ProviderGuards } from '../../src/delivery/provider-guards.ts'
import type { Provider } from '../../src/delivery/provider.ts'
import { ChannelRouter, DeliveryFailedError, type DeliveryAttempt } from '../../src/delivery/router.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import { createMemoryLogger } from '../../src/lib/logger.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'

const message: OutboundMessage = {
  channel: 'sms',
  recipient: '+14155550123',
  text: 'Your verification code is: 424242',
  subject: 'Your Verification Code',
  locale: 'en',
  code: '424242',
  verificationId: '9a7c0c1e-0000-4000-8000-000000000001',
  expiresAt: Date.UTC(2026, 0, 1),
}

const SETTINGS: GuardSettings = { maxInFlight: 100, timeoutMs: 5000, circuitFailures: 3, coolDownMs: 30_000 }

/** A provider whose behaviour the test sets; `held` requests wait until the test lets them go. */
function fake(name: string) {
  const held: (() => void)[] = []
  const p = {
    calls: 0,
    /** `deaf`: held, and deaf to its abort signal (its slot stays taken until the test lets it go). */
    behaviour: 'ok' as 'ok' | 'fail' | 'hang' | 'hold' | 'deaf',
    held,
    provider: {
      name,
      type: 'fake',
      send: async (_m: OutboundMessage, signal: AbortSignal) => {
        p.calls++
        if (p.behaviour === 'fail') throw new Error(`${name} answered 503`)
        if (p.behaviour === 'hang') await new Promise(() => {})
        if (p.behaviour === 'deaf') await new Promise<void>((resolve) => held.push(resolve))
        if (p.behaviour === 'hold') {
          await new Promise<void>((resolve, reject) => {
            held.push(resolve)
            signal.addEventListener('abort', () => reject(new Error('aborted')))
          })
        }
      },
    } satisfies Provider,
  }
  return p
}

function setup(providers: Provider[], settings: Record<string, Partial<GuardSettings>> = {}, budgetMs = 5000) {
  const clock = new ManualClock()
  const logger = createMemoryLogger()
  const attempts: DeliveryAttempt[] = []
  const guards = new ProviderGuards(
    (name) => ({ ...SETTINGS, ...settings[name] }),
    () => clock.now(),
    logger,
  )
  const r = new ChannelRouter({ sms: providers, email: [], voice: [], whatsapp: [] }, budgetMs, logger, (a) => attempts.push(a), guards)
  const circuitLines = () =>
    logger.lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.circuit !== undefined)
      .map((l) => `${l.provider}: ${l.from} -> ${l.circuit}`)
  return { r, clock, guards, attempts, logs: logger.lines, circuitLines }
}

test('a provider takes at most max_in_flight requests at once; the next waits for a freed slot, in order', async () => {
  const a = fake('a')
  a.behaviour = 'hold'
  const { r, guards } = setup([a.provider], { a: { maxInFlight: 2 } })
  const sends = [r.deliver(message), r.deliver(message), r.deliver(message)]
  await Bun.sleep(20)
  expect(a.calls).toBe(2)
  expect(guards.of('a').waiting).toBe(1)
  a.held.shift()!()
  await Bun.sleep(20)
  expect(a.calls).toBe(3)
  expect(guards.of('a').inFlight).toBe(2)
  for (const release of a.held.splice(0)) release()
  expect(await Promise.all(sends)).toEqual([{ provider: 'a' }, { provider: 'a' }, { provider: 'a' }])
  expect(guards.of('a').inFlight).toBe(0)
})

test('a slot not freed within the attempt time: the next provider, as after an error; nothing was sent to the first', async () => {
  const a = fake('a')
  const b = fake('b')
  a.behaviour = 'deaf'
  const { r, attempts, guards } = setup([a.provider, b.provider], { a: { maxInFlight: 1, timeoutMs: 150 } })
  // The first request times out but, deaf to its signal, keeps its slot: the request has not ended.
  expect(await r.deliver(message)).toEqual({ provider: 'b' })
  expect(guards.of('a').inFlight).toBe(1)
  const started = performance.now()
  expect(await r.deliver(message)).toEqual({ provider: 'b' })
  expect(performance.now() - started).toBeGreaterThanOrEqual(140)
  expect(performance.now() - started).toBeLessThan(1000)
  expect(a.calls).toBe(1)
  expect(attempts.map((x) => `${x.provider}/${x.outcome}`)).toEqual(['a/timeout', 'b/accepted', 'a/busy', 'b/accepted'])
  a.held.shift()!()
  await Bun.sleep(1)
  expect(guards.of('a').inFlight).toBe(0)
})

test("a provider's timeout_ms ends its attempt before its equal share would; the error names the provider that may still deliver", async () => {
  const a = fake('a')
  const b = fake('b')
  a.behaviour = 'hang'
  b.behaviour = 'fail'
  const { r, logs } = setup([a.provider, b.provider], { a: { timeoutMs: 200 } }, 5000)
  const started = performance.now()
  const err = await r.deliver(message).catch((e) => e)
  expect(performance.now() - started).toBeLessThan(1500)
  expect(err).toBeInstanceOf(DeliveryFailedError)
  expect(err.message).toBe('all sms providers failed (a: timed out after 200 ms; b: b answered 503)')
  expect(err.mayStillDeliver).toBe('a')
  const warned = logs.map((l) => JSON.parse(l)).filter((l) => l.msg.startsWith('provider failed'))
  expect(warned.map((l) => [l.provider, l.may_still_deliver])).toEqual([
    ['a', true],
    ['b', undefined],
  ])
})

test('errors only, or a slot never had: nothing may still deliver', async () => {
  const a = fake('a')
  a.behaviour = 'fail'
  const { r } = setup([a.provider])
  const err = await r.deliver(message).catch((e) => e)
  expect(err.mayStillDeliver).toBeNull()
})

test('consecutive failures open the circuit: skipped for the cool-down, then one probe; each change is a log line', async () => {
  const a = fake('a')
  const b = fake('b')
  a.behaviour = 'fail'
  const { r, clock, guards, attempts, circuitLines } = setup([a.provider, b.provider])
  for (let i = 0; i < 3; i++) expect(await r.deliver(message)).toEqual({ provider: 'b' })
  expect(guards.of('a').circuit).toBe('open')
  expect(circuitLines()).toEqual(['a: closed -> open'])
  // Open: a is not called at all.
  expect(await r.deliver(message)).toEqual({ provider: 'b' })
  expect(a.calls).toBe(3)
  expect(attempts.at(-2)).toMatchObject({ provider: 'a', outcome: 'circuit_open' })
  clock.advance(29_999)
  await r.deliver(message)
  expect(a.calls).toBe(3)
  // The cool-down is over: one probe, which fails, and the circuit opens again.
  clock.advance(1)
  expect(guards.of('a').circuit).toBe('half_open')
  await r.deliver(message)
  expect(a.calls).toBe(4)
  expect(guards.of('a').circuit).toBe('open')
  clock.advance(30_000)
  a.behaviour = 'ok'
  expect(await r.deliver(message)).toEqual({ provider: 'a' })
  expect(guards.of('a').circuit).toBe('closed')
  expect(circuitLines()).toEqual(['a: closed -> open', 'a: open -> half_open', 'a: half_open -> open', 'a: open -> half_open', 'a: half_open -> closed'])
})

test('half-open lets exactly one probe through; the sends meanwhile go to the next provider', async () => {
  const a = fake('a')
  const b = fake('b')
  a.behaviour = 'fail'
  const { r, clock, guards } = setup([a.provider, b.provider])
  for (let i = 0; i < 3; i++) await r.deliver(message)
  clock.advance(30_000)
  a.behaviour = 'hold'
  const probe = r.deliver(message)
  await Bun.sleep(10)
  const others = await Promise.all([r.deliver(message), r.deliver(message)])
  expect(others).toEqual([{ provider: 'b' }, { provider: 'b' }])
  expect(a.calls).toBe(4)
  a.held.shift()!()
  expect(await probe).toEqual({ provider: 'a' })
  expect(guards.of('a').circuit).toBe('closed')
})

test('timeouts count toward opening the circuit; an answer in between starts the count again', async () => {
  const a = fake('a')
  const b = fake('b')
  a.behaviour = 'hang'
  const { r, guards } = setup([a.provider, b.provider], { a: { timeoutMs: 100 } })
  await r.deliver(message)
  await r.deliver(message)
  a.behaviour = 'ok'
  await r.deliver(message)
  a.behaviour = 'hang'
  await r.deliver(message)
  await r.deliver(message)
  expect(guards.of('a').circuit).toBe('closed')
  await r.deliver(message)
  expect(guards.of('a').circuit).toBe('open')
})

test('when every provider of the channel is open, the send fails at once', async () => {
  const a = fake('a')
  a.behaviour = 'fail'
  const { r } = setup([a.provider])
  for (let i = 0; i < 3; i++) await r.deliver(message).catch(() => {})
  const started = performance.now()
  const err = await r.deliver(message).catch((e) => e)
  expect(performance.now() - started).toBeLessThan(50)
  expect(err.message).toBe('all sms providers failed (a: skipped: its circuit is open)')
  expect(a.calls).toBe(3)
})

test('a reload keeps slots in use and circuits, and applies the new limits', async () => {
  const a = fake('a')
  a.behaviour = 'hold'
  const { r, guards } = setup([a.provider], { a: { maxInFlight: 1 } })
  const first = r.deliver(message)
  const second = r.deliver(message)
  await Bun.sleep(10)
  expect([a.calls, guards.of('a').waiting]).toEqual([1, 1])
  guards.configure(() => ({ ...SETTINGS, maxInFlight: 2 }))
  await Bun.sleep(10)
  expect([a.calls, guards.of('a').inFlight, guards.of('a').waiting]).toEqual([2, 2, 0])
  for (const release of a.held.splice(0)) release()
  await Promise.all([first, second])
})

test('every provider type takes max_in_flight and timeout_ms; config check names a wrong one', () => {
  const config = resolveConfig({
    delivery: { timeout_ms: 8000 },
    channels: { sms: ['a', 'b'] },
    providers: { a: { type: 'noop', max_in_flight: 0, timeout_ms: 50 }, b: { type: 'log', max_in_flight: 20, timeout_ms: 1500 } },
  })
  expect(checkProviders(config, {})).toEqual([
    'providers.a.max_in_flight must be an integer from 1 to 100000 (got 0)',
    'providers.a.timeout_ms must be an integer from 100 to 300000 (got 50)',
  ])
  const settings = guardSettingsOf(config)
  expect(settings('b')).toEqual({ maxInFlight: 20, timeoutMs: 1500, circuitFailures: 5, coolDownMs: 30_000 })
  // The defaults: a high max_in_flight, and the whole delivery budget.
  expect(settings('log')).toEqual({ maxInFlight: 10_000, timeoutMs: 8000, circuitFailures: 5, coolDownMs: 30_000 })
})

test('the views list the providers in force: one a reload removed keeps its guard, unlisted', async () => {
  const a = fake('a')
  const { r, guards } = setup([a.provider])
  guards.configure(() => SETTINGS, ['a', 'b'])
  await r.deliver(message)
  expect(guards.views().map((v) => v.provider)).toEqual(['a', 'b'])
  guards.configure(() => SETTINGS, ['b'])
  expect(guards.views().map((v) => v.provider)).toEqual(['b'])
})
