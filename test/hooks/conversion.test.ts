/**
 * A hook's deliveries are checked by their identity server, never by otpd
 * (docs/integrations.md#what-otpd-records, #the-fraud-guard): they move
 * neither the console's conversion figures nor the fraud guard's conversion
 * rule (nor rule 3, which waits for approvals too), while the API's sends
 * beside them still do. Both engines (OTPD_TEST_DATABASE).
 */
import { describe, expect, test } from 'bun:test'
import { approve, GRACE, guardedPerTest, PUMPING, sendAccepted, uz, uz2 } from '../kit/fraud.ts'
import { consoleHarness, consoleOf, NUMBERS } from '../kit/console.ts'
import { afterTest } from '../kit/cleanup.ts'
import { DAY, harnessPerTest, type Harness } from '../kit/harness.ts'
import { hookCall, withHooks } from '../kit/hooks.ts'

const AUTHORIZATION = 'Bearer 6b1f0f5cfa2e4e1e9d8d3f0a4c2b7e91'
const HOOKS = { logto: { type: 'logto', account: 'default', secret_env: 'LOGTO_HOOK_AUTHORIZATION' } }
const ENV = { LOGTO_HOOK_AUTHORIZATION: AUTHORIZATION }

/** One Logto HTTP SMS connector request (`to` in Logto's digits), which must be delivered. */
async function hookSms(h: Harness, phone: string, code = '482913'): Promise<void> {
  const raw = JSON.stringify({ to: phone.slice(1), type: 'SignIn', payload: { code } })
  const r = await hookCall(h, 'logto', raw, { 'content-type': 'application/json', authorization: AUTHORIZATION })
  if (r.status !== 200) throw new Error(`hook to ${phone} answered ${r.status}: ${r.text}`)
}

describe("the console's conversion figures", () => {
  const start = harnessPerTest({ credits: 100 })

  test("a hook's deliveries are counted as sends and as checked, and left out of the conversion", async () => {
    const h = await start(withHooks(HOOKS, ENV, { credits: 100 }))
    const c = consoleOf(h)
    // Through the API: 4 sends to the US, 2 approved: 50 %.
    for (let i = 0; i < 4; i++) {
      const r = await h.send({ channel: 'sms', recipient: NUMBERS.US(i) })
      if (i < 2) expect((await h.verify({ verification_id: r.json.verification_id, code: h.delivery.lastCode() })).status).toBe(200)
    }
    const before = (await c.get('/console/api/overview?period=24h')).json
    expect(before.totals).toMatchObject({ sends: 4, approved: 2, checked: 0, conversion: 0.5 })
    // Through the hook: 6 more to the US, which otpd never sees approved.
    for (let i = 10; i < 16; i++) await hookSms(h, NUMBERS.US(i))
    const after = (await c.get('/console/api/overview?period=24h')).json
    expect(after.totals).toMatchObject({ sends: 10, accepted: 10, approved: 2, checked: 6, conversion: 0.5 })
    expect(after.by_country).toEqual([expect.objectContaining({ country: 'US', sends: 10, checked: 6, conversion: 0.5 })])
    expect(after.series.at(-1)).toEqual({ at: '2026-01-01T12:00:00.000Z', sends: 10, approved: 2 })
  })

  test('sends that are all a hook\'s say "checked by the identity server" on the overview page, not a rate', async () => {
    const h = await consoleHarness(withHooks(HOOKS, ENV, { credits: 100 }))
    afterTest(() => h.close())
    for (let i = 0; i < 3; i++) await hookSms(h, NUMBERS.GB(i))
    await h.server.storage.settled()
    await h.server.rollup.catchUp()
    const page = await h.admin('/console/?period=24h')
    expect(page.status).toBe(200)
    expect(page.text).toContain('checked by the identity server')
    expect(page.text).not.toContain('0.0%')
  })
})

describe("the fraud guard's conversion rule", () => {
  const signedIn = guardedPerTest()
  const start = (fraud: Record<string, unknown> = {}) => signedIn(fraud, withHooks(HOOKS, ENV, { credits: 100_000 }))

  test('25 unapproved hook deliveries to one prefix start no block; 20 API sends there still do', async () => {
    const h = await start()
    await approve(h, uz2(1)) // UZ proven, in another prefix, then out of the 24 h window
    h.clock.advance(DAY)
    for (let i = 0; i < 25; i++) await hookSms(h, uz(100 + i))
    h.clock.advance(GRACE)
    await hookSms(h, uz(200))
    expect((await h.send({ channel: 'sms', recipient: uz(201) })).status).toBe(200)
    expect((await h.server.fraud.status()).blocks).toEqual([])
    // The rule still judges the API's own sends.
    await sendAccepted(h, 20, 300)
    h.clock.advance(GRACE)
    const r = await h.send({ channel: 'sms', recipient: uz(400) })
    expect(r.status).toBe(429)
    expect(r.json.error).toBe(PUMPING(900))
  })

  test("an unproven country's hourly limit (rule 3) holds the API's sends, not a hook's", async () => {
    const h = await start({ new_country_per_hour: 2 })
    // An unproven country: the API gets 2 sends an hour, a hook is not held to it.
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(3) })).status).toBe(429)
    for (let i = 10; i < 15; i++) await hookSms(h, uz(i))
  })
})
