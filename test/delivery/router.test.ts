/** The channel router (ordered failover within one time budget) and the log provider. */
import { expect, test } from 'bun:test'
import { resolveConfig } from '../../src/config/load.ts'
import { LOG_PROVIDER_MSG, LogProvider } from '../../src/delivery/log-provider.ts'
import { RecipientRejectedError, type Provider } from '../../src/delivery/provider.ts'
import { buildProviders, logOnlyChannels } from '../../src/delivery/registry.ts'
import { ChannelRouter, DeliveryFailedError } from '../../src/delivery/router.ts'
import { createLogger, createMemoryLogger } from '../../src/lib/logger.ts'
import { maskRecipient } from '../../src/lib/mask.ts'
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

function provider(name: string, behaviour: 'ok' | 'fail' | 'reject' | 'hang', calls: string[]): Provider {
  return {
    name,
    type: 'fake',
    send: async () => {
      calls.push(name)
      if (behaviour === 'fail') throw new Error(`${name} answered 503`)
      if (behaviour === 'reject') throw new RecipientRejectedError(`${name}: not a mobile number`)
      if (behaviour === 'hang') await new Promise(() => {})
    },
  }
}

function router(sms: Provider[], timeoutMs = 2000) {
  const logger = createMemoryLogger()
  return { r: new ChannelRouter({ sms, email: [], voice: [], whatsapp: [] }, timeoutMs, logger), logs: logger.lines }
}

test('the first provider that accepts wins; failures before it are logged by name', async () => {
  const calls: string[] = []
  const { r, logs } = router([provider('a', 'fail', calls), provider('b', 'ok', calls), provider('c', 'ok', calls)])
  expect(await r.deliver(message)).toEqual({ provider: 'b' })
  expect(calls).toEqual(['a', 'b'])
  expect(logs).toHaveLength(1)
  expect(logs[0]).toContain('"provider":"a"')
  expect(logs[0]).toContain('a answered 503')
  expect(logs[0]).not.toContain('424242')
  expect(logs[0]).not.toContain('+14155550123')
})

test('when every provider fails the error names each one', async () => {
  const calls: string[] = []
  const { r } = router([provider('a', 'fail', calls), provider('b', 'fail', calls)])
  const err = await r.deliver(message).catch((e) => e)
  expect(err).toBeInstanceOf(DeliveryFailedError)
  expect(err.message).toBe('all sms providers failed (a: a answered 503; b: b answered 503)')
})

test('a rejected recipient is not retried on the next provider', async () => {
  const calls: string[] = []
  const { r } = router([provider('a', 'reject', calls), provider('b', 'ok', calls)])
  await expect(r.deliver(message)).rejects.toBeInstanceOf(DeliveryFailedError)
  expect(calls).toEqual(['a'])
})

test('a hanging provider gets its share of the budget, then the next one is tried', async () => {
  const calls: string[] = []
  const { r } = router([provider('slow', 'hang', calls), provider('b', 'ok', calls)], 400)
  const started = performance.now()
  expect(await r.deliver(message)).toEqual({ provider: 'b' })
  const took = performance.now() - started
  expect(took).toBeGreaterThanOrEqual(190)
  expect(took).toBeLessThan(2000)
  expect(calls).toEqual(['slow', 'b'])
})

test('the time budget covers all providers together', async () => {
  const calls: string[] = []
  const { r } = router([provider('slow', 'hang', calls), provider('slower', 'hang', calls), provider('last', 'hang', calls)], 300)
  const started = performance.now()
  const err = await r.deliver(message).catch((e) => e)
  const took = performance.now() - started
  expect(took).toBeGreaterThanOrEqual(290)
  expect(took).toBeLessThan(1500)
  // The first gets a third of the budget, less the few ms its slot and circuit took under load.
  expect(err.message).toMatch(
    /^all sms providers failed \(slow: timed out after (9[0-9]|100) ms; slower: timed out after \d+ ms; last: timed out after \d+ ms\)$/,
  )
  expect(calls).toEqual(['slow', 'slower', 'last'])
})

test('with nothing configured every channel uses the log provider', () => {
  const providers = buildProviders(resolveConfig({}), { env: {} })
  expect(logOnlyChannels(providers)).toEqual(['sms', 'email', 'voice', 'whatsapp'])
  const named = buildProviders(resolveConfig({ providers: { dev: { type: 'log' } }, channels: { sms: ['dev'] } }), { env: {} })
  expect(named.sms.map((p) => p.name)).toEqual(['dev'])
  expect(named.email.map((p) => p.name)).toEqual(['log'])
})

test('configured and fallback log providers both write to the given logger', async () => {
  const logger = createMemoryLogger()
  const built = buildProviders(resolveConfig({ providers: { dev: { type: 'log' } }, channels: { sms: ['dev'] } }), { env: {}, logger })
  await built.sms[0]!.send(message, new AbortController().signal)
  await built.voice[0]!.send({ ...message, channel: 'voice' }, new AbortController().signal)
  expect(logger.lines.map((l) => JSON.parse(l)).map((l) => [l.msg, l.provider, l.channel])).toEqual([
    [LOG_PROVIDER_MSG, 'dev', 'sms'],
    [LOG_PROVIDER_MSG, 'log', 'voice'],
  ])
})

test('the log provider writes one structured line: the whole message, code included (its one job), the recipient masked', async () => {
  const lines: string[] = []
  const logger = createLogger({ write: (l) => lines.push(l), now: () => Date.UTC(2026, 0, 1) })
  await new LogProvider('log', logger).send({ ...message, channel: 'email', recipient: 'ab12cd@b.io' }, new AbortController().signal)
  expect(lines.map((l) => JSON.parse(l))).toEqual([
    {
      time: '2026-01-01T00:00:00.000Z',
      level: 'info',
      msg: '[otpd log provider] message printed, not delivered',
      provider: 'log',
      channel: 'email',
      recipient: 'a****d@b.io',
      verification_id: message.verificationId,
      subject: 'Your Verification Code',
      text: 'Your verification code is: 424242',
    },
  ])
})

test('in text mode the line is text like every other line, never a JSON line or a raw message', async () => {
  const lines: string[] = []
  const logger = createLogger({ format: 'text', write: (l) => lines.push(l), now: () => Date.UTC(2026, 0, 1) })
  await new LogProvider('dev', logger).send(message, new AbortController().signal)
  expect(lines).toEqual([
    `2026-01-01T00:00:00.000Z INFO  [otpd log provider] message printed, not delivered provider=dev channel=sms recipient=${maskRecipient(message.recipient)} verification_id=${message.verificationId} text=Your verification code is: 424242`,
  ])
})

test('the noop provider accepts everything and counts as log-only for the start-up warning', async () => {
  const config = resolveConfig({ channels: { sms: ['bench'] }, providers: { bench: { type: 'noop' } } })
  const providers = buildProviders(config, { env: {} })
  expect(providers.sms.map((p) => p.type)).toEqual(['noop'])
  await providers.sms[0]!.send(message, AbortSignal.timeout(1000))
  expect(logOnlyChannels(providers)).toEqual(['sms', 'email', 'voice', 'whatsapp'])
})

test('every provider attempt is reported with its outcome, for metrics', async () => {
  const calls: string[] = []
  const attempts: string[] = []
  const r = new ChannelRouter(
    { sms: [provider('a', 'fail', calls), provider('b', 'reject', calls)], email: [], voice: [provider('c', 'hang', calls)], whatsapp: [] },
    200,
    createMemoryLogger(),
    (a) => attempts.push(`${a.channel}/${a.provider}/${a.type}/${a.outcome}/${a.ms >= 0}`),
  )
  await r.deliver(message).catch(() => {})
  await r.deliver({ ...message, channel: 'voice' }).catch(() => {})
  expect(attempts).toEqual(['sms/a/fake/failed/true', 'sms/b/fake/rejected/true', 'voice/c/fake/timeout/true'])
})
