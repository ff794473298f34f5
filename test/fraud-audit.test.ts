/**
 * Fraud guard (EXTENSIONS.md section 5): the sentences of the section that no
 * other fraud test pins down (the audit in /work/audit24.md maps every one to
 * its test), and the guard's interplay with issue 23: `send.blocked` through
 * the real outbox, Idempotency-Key replays of its answers, and the status
 * endpoint. On the real app with an injected clock.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { resolveConfig } from '../src/app-config.ts'
import { destinationOf } from '../src/lib/phone-country.ts'
import { ManualClock } from '../src/lib/clock.ts'
import { cliEnv, cleanUpAfterEach } from './cli-helpers.ts'
import { approve, balance, guarded, PUMPING, refusals, us, uz } from './fraud-helpers.ts'
import { createHarness, DAY, HOUR, MINUTE, TEST, type Harness } from './harness.ts'
import { sameDatabase } from './same-database.ts'
import { startReceiver, type Receiver } from './webhook-receiver.ts'

let h: Harness | undefined
let rx: Receiver | undefined
afterEach(() => {
  h?.close()
  h = undefined
  rx?.stop()
  rx = undefined
})
cleanUpAfterEach()

const GRACE = 600_000
const IP_LIMIT = (s: number) => `Rate limit exceeded: Maximum 1 verification codes per hour for this IP address. Please try again in ${s} seconds.`
/** Another prefix of Uzbekistan: +99893555. */
const uz2 = (i: number) => `+99893555${String(i).padStart(4, '0')}`

/** `n` sends that must be accepted. */
async function accepted(h: Harness, n: number, to: (i: number) => string, from = 100, extra: Record<string, unknown> = {}): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await h.send({ channel: 'sms', recipient: to(from + i), ...extra })
    if (r.status !== 200) throw new Error(`send ${i} to ${to(from + i)} answered ${r.status}: ${r.json.error}`)
  }
}

/** UZ proven (an approval in another prefix, then a day later: out of rule 4's window) and 20 unapproved sends older than the grace period: the next UZ send starts a block. */
async function uzEvidence(h: Harness): Promise<void> {
  await approve(h, uz2(1))
  h.clock.advance(DAY)
  await accepted(h, 20, uz)
  h.clock.advance(GRACE)
}

describe('exemptions', () => {
  test('test recipients pass every rule, even with each one saturated, and count toward none', async () => {
    h = await guarded({ allowed_countries: ['US'], ip_per_hour: 1, new_country_per_hour: 1 })
    await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.1' })).status).toBe(200)
    // Rule 1 (a test phone is ZZ), rule 2 (the IP is full), rule 3 (US is full), rule 5 (the cap is reached).
    expect((await h.send({ channel: 'sms', recipient: us(2) })).status).toBe(429)
    for (const [channel, recipient] of [
      ['sms', TEST.PHONE_SUCCESS],
      ['voice', TEST.PHONE_FAIL],
      ['sms', TEST.PHONE_EXPIRED],
      ['email', TEST.EMAIL_SUCCESS],
    ] as const) {
      expect((await h.send({ channel, recipient, ip: '192.0.2.1' })).status).toBe(200)
    }
    expect(Number((await h.sql('SELECT count(*) AS n FROM fraud_sends'))[0]!.n)).toBe(1)
    expect(await refusals(h, { rule: 'geo', country: 'ZZ', decision: 'refused' })).toBe(0)
  })

  test('email is exempt from rules 1-4: its ip neither meets nor counts toward rule 2; rule 5 still applies', async () => {
    h = await guarded({ allowed_countries: ['US'], ip_per_hour: 1 })
    expect((await h.send({ channel: 'email', recipient: 'a@example.com', ip: '192.0.2.1' })).status).toBe(200)
    expect((await h.send({ channel: 'email', recipient: 'b@example.com', ip: '192.0.2.1' })).status).toBe(200)
    // The two emails did not use the IP's one send an hour.
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.1' })).status).toBe(200)
    // Now it is full: email still goes.
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '192.0.2.1' })).status).toBe(429)
    expect((await h.send({ channel: 'email', recipient: 'c@example.com', ip: '192.0.2.1' })).status).toBe(200)
    await h.server.fraud.setAccount('default', { dailyCreditLimit: 4 })
    const r = await h.send({ channel: 'email', recipient: 'd@example.com' })
    expect(r.status).toBe(429)
    expect(r.json.error).toStartWith('Daily credit limit of 4 reached for this account.')
  })
})

test('the recipient failure cap spares the test recipients, and applies to them again with --test-recipients off', async () => {
  h = await guarded({}, { config: { limits: { key_requests_per_minute: 1000, recipient_failures_per_day: 3 } } })
  let last = ''
  const failures = async (recipient: string, n: number) => {
    const sent = await h!.send({ channel: 'sms', recipient })
    expect(sent.status).toBe(200)
    last = sent.json.verification_id
    const wrong = h!.delivery.sent.length > 0 && h!.delivery.lastCode() === '000000' ? '111111' : '000000'
    const answers: string[] = []
    for (let i = 0; i < n; i++) answers.push((await h!.verify({ verification_id: sent.json.verification_id, code: wrong })).json.message)
    return answers
  }
  // Default: 3 failures on two verifications each, every one compared.
  expect(await failures(TEST.PHONE_SUCCESS, 3)).toEqual(['Invalid code', 'Invalid code', 'Invalid code'])
  expect(await failures(TEST.PHONE_SUCCESS, 1)).toEqual(['Invalid code'])
  // Off: the number is a recipient like any other, whose failures count toward the cap.
  await h.server.fraud.setAccount('default', { testRecipients: false, allowedCountries: ['*'] })
  expect(await failures(TEST.PHONE_SUCCESS, 3)).toEqual(['Invalid code', 'Invalid code', 'Invalid code'])
  const locked = await h.verify({ verification_id: last, code: '000000' })
  expect(locked.json.message).toBe('Too many failed attempts. Please try again in 15 minutes or request a new code.')
  // Capped: send sells it no new code either (docs/api.md#hardening).
  const capped = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(capped.status).toBe(429)
  expect(capped.json.error).toBe(`Rate limit exceeded: too many failed attempts for this recipient. Please try again in ${24 * 3600} seconds.`)
})

describe('"sends" are the sends to real recipients that this account had accepted', () => {
  test('rules 3 and 4 count per account: another account neither uses the hour, nor proves the country, nor shares a block', async () => {
    h = await guarded({ new_country_per_hour: 2 })
    await h.server.admin.createAccount('acme')
    await h.server.admin.addCredits(100, 'acme')
    const acme = (await h.server.admin.createKey({ account: 'acme' })).key
    // Rule 3: acme's two UZ sends leave default's two.
    for (const i of [1, 2]) expect((await h.send({ channel: 'sms', recipient: uz(i) }, acme)).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(3) }, acme)).status).toBe(429)
    for (const i of [4, 5]) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(6) })).status).toBe(429)
    // An approval proves the country for its own account only.
    h.clock.advance(HOUR)
    const sent = await h.send({ channel: 'sms', recipient: uz(7), code: '424242' })
    expect((await h.verify({ verification_id: sent.json.verification_id, code: '424242' })).json.verified).toBe(true)
    await accepted(h, 5, uz, 10)
    expect((await h.send({ channel: 'sms', recipient: uz(20) }, acme)).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(21) }, acme)).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(22) }, acme)).status).toBe(429)
    // Rule 4: default's 20 unapproved sends block default's scopes, not acme's.
    h.clock.advance(DAY)
    await accepted(h, 20, uz, 100)
    h.clock.advance(GRACE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).json.error).toBe(PUMPING(900))
    expect((await h.send({ channel: 'sms', recipient: uz(1) }, acme)).status).toBe(200)
    expect((await h.server.fraud.status('acme')).blocks).toEqual([])
    expect((await h.server.fraud.status('default')).blocks.map((b) => b.scope)).toEqual(['UZ', '+99890123'])
  })

  test('a send refused by credits (402) or by a per-recipient limit was not accepted: it counts toward no rule', async () => {
    h = await guarded({ new_country_per_hour: 2 }, { credits: 0, config: { limits: { key_requests_per_minute: 1000, recipient_per_minute: 1 } } })
    for (let i = 0; i < 5; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(402)
    await h.server.admin.addCredits(10)
    expect((await h.send({ channel: 'sms', recipient: uz(10) })).status).toBe(200)
    for (let i = 0; i < 3; i++)
      expect((await h.send({ channel: 'sms', recipient: uz(10) })).json.error).toStartWith('Rate limit exceeded: Maximum 1 verification codes per minute')
    // Rule 3 has counted one send: the second of the hour goes, the third is refused.
    expect((await h.send({ channel: 'sms', recipient: uz(11) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(12) })).json.error).toStartWith('Sending to this destination is temporarily blocked')
  })

  test('a send refused by the guard counts toward no rule: not rule 4 (nor rule 2, nor rule 3)', async () => {
    h = await guarded({ ip_per_hour: 1 })
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await accepted(h, 18, uz)
    await accepted(h, 1, uz, 200, { ip: '198.51.100.9' })
    // Five sends to the prefix refused by rule 2.
    for (let i = 0; i < 5; i++)
      expect((await h.send({ channel: 'sms', recipient: uz(300 + i), ip: '198.51.100.9' })).json.error).toStartWith(IP_LIMIT(0).slice(0, 60))
    h.clock.advance(GRACE)
    // 19 sends, not 24: no evidence yet.
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    h.clock.advance(GRACE)
    // That one makes 20 once it is past the grace period.
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).json.error).toBe(PUMPING(900))
  })
})

describe('order', () => {
  test('rules 1 and 2 come before rule 4; rule 4 before rule 5; the guard before the per-recipient limits and credits', async () => {
    h = await guarded({ ip_per_hour: 1 }, { config: { limits: { key_requests_per_minute: 1000, recipient_per_minute: 1 } } })
    await uzEvidence(h)
    expect((await h.send({ channel: 'sms', recipient: uz(100), ip: '192.0.2.7' })).json.error).toBe(PUMPING(900)) // both scopes block
    // Rule 2 before rule 4: the IP is full (one accepted send) and the prefix blocked.
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.7' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(101), ip: '192.0.2.7' })).json.error).toStartWith(
      'Rate limit exceeded: Maximum 1 verification codes per hour for this IP address.',
    )
    // Rule 1 before rule 4.
    await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
    expect((await h.send({ channel: 'sms', recipient: uz(102) })).status).toBe(403)
    await h.server.fraud.setAccount('default', { allowedCountries: null })
    // Rule 4 before rule 5: the cap is reached too.
    await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
    expect((await h.send({ channel: 'sms', recipient: uz(102) })).json.error).toStartWith('Sending to this destination is temporarily blocked')
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'refused' })).toBe(2)
    // Rule 5 before the per-recipient limits: us(1) is full for the minute.
    expect((await h.send({ channel: 'sms', recipient: us(1) })).json.error).toStartWith('Daily credit limit of 1 reached')
    await h.server.fraud.setAccount('default', { dailyCreditLimit: null })
    expect((await h.send({ channel: 'sms', recipient: us(1) })).json.error).toStartWith('Rate limit exceeded: Maximum 1 verification codes per minute')
    // The guard before credits (402): with a balance of 0, the refusal is the guard's.
    await h.server.admin.deductCredits(await balance(h))
    expect(await balance(h)).toBe(0)
    expect((await h.send({ channel: 'sms', recipient: uz(103) })).status).toBe(429)
    await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
    expect((await h.send({ channel: 'sms', recipient: uz(103) })).status).toBe(403)
    expect((await h.send({ channel: 'sms', recipient: us(2) })).status).toBe(402)
  })
})

describe('modes', () => {
  test('monitor: rule 2 and rule 4 decide and record (the block starts, status shows it) and refuse nothing; enforce then refuses with the block left', async () => {
    h = await guarded({ mode: 'monitor', ip_per_hour: 1 })
    await uzEvidence(h)
    const before = h.delivery.sent.length
    expect((await h.send({ channel: 'sms', recipient: uz(1), ip: '192.0.2.9' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.9' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '192.0.2.9' })).status).toBe(200)
    expect(h.delivery.sent.length).toBe(before + 3)
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'would_refuse' })).toBe(1)
    // us(1) was the IP's first counted send (uz(1) would have been refused, so it counts toward no rule).
    expect(await refusals(h, { rule: 'ip', country: 'US', decision: 'would_refuse' })).toBe(1)
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'refused' })).toBe(0)
    const now = h.clock.now()
    expect((await h.server.fraud.status()).blocks.map((b) => [b.kind, b.scope, b.until - now])).toEqual([
      ['country', 'UZ', 15 * MINUTE],
      ['prefix', '+99890123', 15 * MINUTE],
    ])
    h.clock.advance(5 * MINUTE)
    h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { mode: 'enforce', ip_per_hour: 1 } }))
    const r = await h.send({ channel: 'sms', recipient: uz(2) })
    expect(r.status).toBe(429)
    expect(r.json.retry_after).toBe(600)
  })

  test('off: rules 2 and 4 are not evaluated either (no block starts, nothing would be refused, nothing logged)', async () => {
    h = await guarded({ mode: 'off', ip_per_hour: 1 })
    await uzEvidence(h)
    for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: uz(i), ip: '192.0.2.9' })).status).toBe(200)
    expect((await h.server.fraud.status()).blocks).toEqual([])
    expect(await refusals(h, { rule: 'ip', country: 'UZ', decision: 'would_refuse' })).toBe(0)
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'would_refuse' })).toBe(0)
    expect(h.logs.filter((l) => l.includes('fraud guard'))).toEqual([])
  })
})

describe('rule 3 and rule 4 details', () => {
  test('an approval 30 days less 1 ms old still proves the country; 30 days old, not', async () => {
    h = await guarded({ new_country_per_hour: 1 })
    await approve(h, uz(0))
    h.clock.advance(30 * DAY - 1)
    await accepted(h, 3, uz)
    // Exactly 30 days: unproven again, and the hour already holds those 3 sends.
    h.clock.advance(1)
    expect((await h.send({ channel: 'sms', recipient: uz(9) })).status).toBe(429)
  })

  test('the prefix: the E.164 digits without the last 4 from 8 digits on; under 8 digits the country', () => {
    expect(destinationOf('+39066981')).toEqual({ country: 'VA', prefix: '+3906' }) // 8 digits
    expect(destinationOf('+3906698')).toEqual({ country: 'VA', prefix: 'VA' }) // 7 digits
    expect(destinationOf('+999999999999999')).toEqual({ country: 'ZZ', prefix: '+99999999999' }) // 15 digits
  })

  test('a number of fewer than 8 digits has one scope, its country: 20 unapproved sends block the country only', async () => {
    h = await guarded()
    const short = '+3906698' // Vatican City, 7 digits
    await approve(h, '+390669812345') // VA proven, in another prefix
    h.clock.advance(DAY)
    for (let i = 0; i < 20; i++) expect((await h.send({ channel: 'sms', recipient: short })).status).toBe(200)
    h.clock.advance(GRACE)
    const r = await h.send({ channel: 'sms', recipient: short })
    expect(r.json.error).toBe(PUMPING(900))
    expect((await h.server.fraud.status()).blocks.map((b) => [b.kind, b.scope])).toEqual([['country', 'VA']])
    // The country scope covers the longer VA numbers too.
    expect((await h.send({ channel: 'sms', recipient: '+390669812346' })).status).toBe(429)
  })
})

describe('fraud status and unblock', () => {
  test('status counts approvals and conversion by country over the last 24 h only', async () => {
    h = await guarded()
    await approve(h, us(1))
    await approve(h, us(2))
    expect((await h.send({ channel: 'sms', recipient: us(3) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    h.clock.advance(HOUR)
    expect((await h.server.fraud.status()).countries).toEqual([
      { account: 'default', country: 'US', sends: 3, approved: 2, conversion: 2 / 3 },
      { account: 'default', country: 'UZ', sends: 1, approved: 0, conversion: 0 },
    ])
    h.clock.advance(DAY - HOUR)
    expect((await h.server.fraud.status()).countries).toEqual([])
  })

  test('the CLI: status as a table with --account, approvals in --json, and unblock of a blocked prefix says so', async () => {
    const env = cliEnv()
    env.run('accounts', 'create', 'acme')
    // The traffic comes from a server on the same database file, on a clock at the real time (the CLI's).
    h = await createHarness({
      dir: env.dir,
      databaseUrl: env.databaseUrl,
      clock: new ManualClock(Date.now()),
      credits: 100,
      config: { fraud: { mode: 'enforce', min_sends: 2, conversion_grace_seconds: 0 } },
    })
    await approve(h, us(1))
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(3) })).status).toBe(429)
    h.close()
    h = undefined

    expect(env.json('fraud', 'status').countries).toEqual([
      { account: 'default', country: 'UZ', sends: 2, approved: 0, conversion: 0 },
      { account: 'default', country: 'US', sends: 1, approved: 1, conversion: 1 },
    ])
    const acme = env.run('fraud', 'status', '--account', 'acme')
    expect(acme.code).toBe(0)
    expect(acme.stdout).toMatch(
      /^mode: enforce \(config \[fraud\] mode\)\n\nAccounts:\nACCOUNT +COUNTRIES +DAILY CREDIT LIMIT +TEST RECIPIENTS\nacme +\* +none +on\n\nActive blocks:\n {2}none\n\nSends by country, last 24 h:\n {2}none\n$/,
    )
    const mine = env.run('fraud', 'status', '--account', 'default')
    expect(mine.stdout).toMatch(/\ndefault +conversion +UZ +0 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\ndefault +conversion +\+99890123 +0 /)
    expect(mine.stdout).toMatch(/\ndefault +US +1 +1 +100\.0%\n/)
    expect(mine.stdout).not.toContain('acme')
    const lifted = env.run('fraud', 'unblock', '+99890123')
    expect(lifted.code).toBe(0)
    expect(lifted.stdout).toBe("unblocked prefix +99890123 of account 'default'; its escalation is reset and its conversion counts from now\n")
    expect(env.json('fraud', 'status').blocks.map((b: { scope: string }) => b.scope)).toEqual(['UZ'])
    const none = env.run('fraud', 'unblock', '+99890123')
    expect(none.code).toBe(0)
    expect(none.stdout).toBe("prefix +99890123 of account 'default' was not blocked; its escalation is reset and its conversion counts from now\n")
  })
})

describe('with issue 23', () => {
  async function withReceiver(fraud: Record<string, unknown>): Promise<Harness> {
    h = await guarded(fraud)
    rx = startReceiver()
    await h.server.webhooks.add({ url: rx.url })
    return h
  }
  async function deliver(h: Harness): Promise<void> {
    await h.server.storage.settled()
    while ((await h.server.events.deliverDue()) > 0);
  }
  const blocked = () => rx!.received.filter((r) => r.json.type === 'send.blocked').map((r) => r.json)

  test('send.blocked through the real outbox: a rule-1 refusal in enforce mode, and a rule-4 one; the exact body', async () => {
    h = await withReceiver({ allowed_countries: ['US', 'UZ'] })
    await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
    expect((await h.send({ channel: 'voice', recipient: uz(1) })).status).toBe(403)
    await deliver(h)
    const geo = blocked()[0]!
    expect(geo).toEqual({
      id: geo.id,
      type: 'send.blocked',
      occurred_at: new Date(h.clock.now()).toISOString(),
      account: 'default',
      data: {
        verification_id: null,
        channel: 'voice',
        recipient: '+9989*****001',
        status: null,
        sequence: 0,
        test: false,
        rule: 'geo',
        country: 'UZ',
        prefix: '+99890123',
      },
    })
    await h.server.fraud.setAccount('default', { allowedCountries: null })
    await uzEvidence(h)
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(429)
    await deliver(h)
    expect(blocked()).toHaveLength(2)
    expect(blocked()[1]!.data).toEqual({
      verification_id: null,
      channel: 'sms',
      recipient: '+9989*****002',
      status: null,
      sequence: 0,
      test: false,
      rule: 'conversion',
      country: 'UZ',
      prefix: '+99890123',
    })
  })

  test('monitor refuses nothing and so emits no send.blocked: the send is a verification like any other (verification.sent)', async () => {
    h = await withReceiver({ mode: 'monitor', allowed_countries: ['US'] })
    const sent = await h.send({ channel: 'sms', recipient: uz(1) })
    expect(sent.status).toBe(200)
    expect(await refusals(h, { rule: 'geo', country: 'UZ', decision: 'would_refuse' })).toBe(1)
    await deliver(h)
    expect(rx!.received.map((r) => [r.json.type, r.json.data.verification_id])).toEqual([['verification.sent', sent.json.verification_id]])
  })

  test('Idempotency-Key: a guard 429 is stored and replayed verbatim (Retry-After too) once rule 3 has room again, running nothing again; the geo 403 is not stored', async () => {
    h = await withReceiver({ new_country_per_hour: 1 })
    const post = (body: Record<string, unknown>, key: string) => h!.call('/api/v1/send', body, { headers: { 'idempotency-key': key } })
    expect((await post({ channel: 'sms', recipient: uz(1) }, 'a')).status).toBe(200)
    const first = await post({ channel: 'sms', recipient: uz(2) }, 'b')
    expect(first.status).toBe(429)
    expect(first.json.error).toBe(PUMPING(3600))
    h.clock.advance(2 * HOUR) // rule 3 has room again
    const replay = await post({ channel: 'sms', recipient: uz(2) }, 'b')
    expect(replay.status).toBe(429)
    expect(replay.json).toEqual(first.json)
    expect(replay.headers.get('retry-after')).toBe('3600')
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.headers.get('x-request-id')).toBe(first.json.request_id)
    expect(h.delivery.sent).toHaveLength(1)
    await deliver(h)
    expect(blocked()).toHaveLength(1) // the replay emitted no second send.blocked
    // Rule 5's 429 likewise.
    await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
    const capped = await post({ channel: 'email', recipient: 'a@example.com' }, 'c')
    expect(capped.json.error).toStartWith('Daily credit limit of 1 reached')
    await h.server.fraud.setAccount('default', { dailyCreditLimit: null })
    expect((await post({ channel: 'email', recipient: 'a@example.com' }, 'c')).json).toEqual(capped.json)
    expect(h.delivery.sent).toHaveLength(1)

    // The geo 403 is not stored (section 2 lists 403 among the answers not stored): allow the country, retry, it sends.
    await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
    const geo = await post({ channel: 'sms', recipient: uz(3) }, 'd')
    expect(geo.status).toBe(403)
    expect(geo.headers.get('idempotent-replayed')).toBeNull()
    await h.server.fraud.setAccount('default', { allowedCountries: null })
    const retried = await post({ channel: 'sms', recipient: uz(3) }, 'd')
    expect(retried.status).toBe(200)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
    expect(h.delivery.sent).toHaveLength(2)
    // ...and that 200 is the one stored.
    const again = await post({ channel: 'sms', recipient: uz(3) }, 'd')
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json).toEqual(retried.json)
  })

  test("the status endpoint and verify are not the guard's: a verification sent before a block stays pending, approves and shows approved", async () => {
    h = await guarded({ conversion_grace_seconds: 60 }) // within the code's 5 minutes
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await accepted(h, 19, uz)
    const sent = await h.send({ channel: 'sms', recipient: uz(50), code: '424242' })
    expect(sent.status).toBe(200)
    h.clock.advance(MINUTE)
    expect((await h.send({ channel: 'sms', recipient: uz(51) })).status).toBe(429) // blocked now
    const status = () => h!.call(`/api/v1/verifications/${sent.json.verification_id}`, undefined, { method: 'GET', headers: {} })
    const before = await status()
    expect(before.status).toBe(200)
    expect(before.json.status).toBe('pending')
    expect((await h.verify({ verification_id: sent.json.verification_id, code: '424242' })).json.verified).toBe(true)
    expect((await status()).json.status).toBe('approved')
  })
})
