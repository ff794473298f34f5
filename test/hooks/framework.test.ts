/**
 * What every hook type shares (docs/integrations.md#how-a-hook-works), shown
 * with a test type registered in the adapter table for the file's tests: a
 * whole text delivered as given within `messages.sms_max_segments`, retries
 * dropped by the server's delivery id or else by the text, concurrent
 * retries delivered and charged once. Both engines (OTPD_TEST_DATABASE).
 */
import { describe, expect, test } from 'bun:test'
import type { HookAdapter, HookRefusal } from '../../src/hooks/adapter.ts'
import { HOOK_ADAPTERS } from '../../src/hooks/registry.ts'
import { afterTest } from '../kit/cleanup.ts'
import { harnessPerTest, type Harness, type HarnessOptions } from '../kit/harness.ts'
import { balance, hookCall, withHooks, written } from '../kit/hooks.ts'

const harness = harnessPerTest()
const SECRET = 'test-hook-secret-0123456789abcdef'

/** A type that sends a whole text: `{ to, text, id? }`, authenticated by X-Test-Secret; refusals as `{kind, message}`. */
const wholeText: HookAdapter = {
  type: 'kratos',
  authenticate: (req, s) => (req.headers.get('x-test-secret') === s.secret ? { ok: true } : { ok: false, reason: 'wrong secret' }),
  parse: (req) => {
    const b = JSON.parse(new TextDecoder().decode(req.rawBody)) as { to: string; text: string; id?: string }
    return { ok: true, message: { channel: 'sms', recipient: b.to, text: b.text, deliveryId: b.id } }
  },
  accepted: () => ({ status: 200, body: '{"ok":true}' }),
  refused: (r: HookRefusal) => ({ status: r.kind === 'unauthenticated' ? 401 : 422, body: JSON.stringify({ kind: r.kind, message: r.message }) }),
}

/** A harness with hook `t` of the test type (in the table until the test ends). */
async function start(opts: HarnessOptions = {}, hook: Record<string, unknown> = {}): Promise<Harness> {
  const saved = HOOK_ADAPTERS.kratos
  HOOK_ADAPTERS.kratos = wholeText
  // Put back as it was, absent included: other files read the table's keys.
  afterTest(() => {
    if (saved === undefined) delete HOOK_ADAPTERS.kratos
    else HOOK_ADAPTERS.kratos = saved
  })
  return harness(withHooks({ t: { type: 'kratos', account: 'default', secret_env: 'TEST_HOOK_SECRET', ...hook } }, { TEST_HOOK_SECRET: SECRET }, opts))
}

const call = (h: Harness, body: Record<string, unknown>) => hookCall(h, 't', JSON.stringify(body), { 'x-test-secret': SECRET })

describe('a whole text', () => {
  test('is delivered as given: no catalogue text, no autofill line', async () => {
    const h = await start({ config: { messages: { otp_domain: 'example.com' } } })
    const r = await call(h, { to: '+14155550123', text: 'Your Acme code is 123456. Do not share it.' })
    expect(r.status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({ recipient: '+14155550123', text: 'Your Acme code is 123456. Do not share it.', code: '' })
    expect(await balance(h)).toBe(9)
    expect((await written(h)).verifications[0]).toMatchObject({ checked_by: 't' })
  })

  test('over messages.sms_max_segments is refused, nothing charged', async () => {
    const h = await start({ config: { messages: { sms_max_segments: 1 } } })
    const r = await call(h, { to: '+14155550123', text: `Your code is 123456. ${'x'.repeat(150)}` })
    expect(r.status).toBe(422)
    expect(r.json).toEqual({ kind: 'invalid', message: 'message is longer than 1 SMS segments' })
    expect(h.delivery.sent).toHaveLength(0)
    expect(await balance(h)).toBe(10)
  })

  test('over 1600 characters is refused', async () => {
    const h = await start()
    const r = await call(h, { to: '+14155550123', text: 'x'.repeat(1601) })
    expect(r.json).toEqual({ kind: 'invalid', message: 'Hook text must be 1-1600 characters' })
  })
})

describe("the hook's request limit", () => {
  test('counts a payload it cannot deliver, as the per-key limit counts a 400', async () => {
    const h = await start({}, { requests_per_minute: 2 })
    expect((await call(h, { to: 'not-a-number', text: 'x' })).json.kind).toBe('invalid')
    expect((await call(h, { to: 'not-a-number', text: 'x' })).json.kind).toBe('invalid')
    const r = await call(h, { to: '+14155550123', text: 'Your Acme code is 123456' })
    expect(r.json).toEqual({ kind: 'rate_limited', message: 'Rate limit exceeded: Maximum 2 requests per minute. Please try again in 60 seconds.' })
    expect(h.delivery.sent).toHaveLength(0)
  })
})

describe('retries', () => {
  test("the server's delivery id decides: the same id is one delivery, another id a new one", async () => {
    const h = await start()
    const text = 'Your Acme code is 123456'
    expect((await call(h, { to: '+14155550123', text, id: 'd-1' })).status).toBe(200)
    expect((await call(h, { to: '+14155550123', text, id: 'd-1' })).json).toEqual({ ok: true })
    expect((await call(h, { to: '+14155550123', text, id: 'd-2' })).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(2)
  })

  test('without one, the same recipient and text within the code lifetime is one delivery', async () => {
    const h = await start()
    const text = 'Your Acme code is 123456'
    expect((await call(h, { to: '+14155550123', text })).status).toBe(200)
    expect((await call(h, { to: '+14155550123', text })).status).toBe(200)
    expect((await call(h, { to: '+14155550124', text })).status).toBe(200)
    expect(h.delivery.sent.map((m) => m.recipient)).toEqual(['+14155550123', '+14155550124'])
  })

  test('retries arriving while the first is still delivering are answered accepted; one delivery, one charge', async () => {
    const h = await start()
    let release = () => {}
    h.delivery.gate = new Promise<void>((r) => {
      release = r
    })
    const body = { to: '+14155550123', text: 'Your Acme code is 123456', id: 'd-9' }
    const first = call(h, body)
    // The first holds its reservation (`running`) while the provider is held.
    await Bun.sleep(50)
    const retries = await Promise.all([call(h, body), call(h, body), call(h, body)])
    expect(retries.map((r) => r.status)).toEqual([200, 200, 200])
    release()
    expect((await first).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(1)
    expect(await balance(h)).toBe(9)
    expect((await written(h)).debits).toBe(1)
  })
})
