/**
 * The search by a full number or address (docs/console.md#verifications): a
 * POST (no recipient in any URL), limited per operator and written to the
 * audit log without the value, over masks that leave enough digits hidden
 * that trying candidates is slow as well as visible. The attack as the
 * review ran it: 551 candidates for one mask in 403 ms found the number.
 */
import { expect, test } from 'bun:test'
import { RECIPIENT_SEARCH_WINDOW_MS, RECIPIENT_SEARCHES_PER_HOUR } from '../../src/otp/console-search.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { type ConsoleHarness, consoleHarness, NUMBERS, type Session } from '../kit/console.ts'

const SEARCH = '/console/api/verifications/search'
const LIMITED = /^Too many searches by recipient: at most 30 an hour per operator\. Please try again in [0-9]+ seconds\.$/

async function harness(): Promise<ConsoleHarness> {
  const h = closeAfterTest(await consoleHarness({ credits: 100 }))
  return h
}

async function sent(h: ConsoleHarness, recipient: string, channel = 'sms'): Promise<string> {
  const r = await h.send({ channel, recipient })
  expect(r.status).toBe(200)
  await h.server.storage.settled()
  h.clock.advance(1000)
  return r.json.verification_id as string
}

async function search(h: ConsoleHarness, body: Record<string, unknown>, session?: Session) {
  return h.admin(SEARCH, { body, ...(session ? { session } : {}) })
}

test('by POST: a number typed with spaces and dashes, an address in another case; other accounts; a bad one is a 400', async () => {
  const h = await harness()
  const us2 = await sent(h, NUMBERS.US(2))
  const mail = await sent(h, 'Ada.Lovelace+otp@Example.com', 'email')
  const ids = async (body: Record<string, unknown>) => {
    const r = await search(h, body)
    expect(r.status).toBe(200)
    return (r.json.verifications as { verification_id: string }[]).map((v) => v.verification_id)
  }
  const typed = NUMBERS.US(2).replace(/^(\+1)(\d{3})(\d{3})/, '$1 $2-$3 ')
  expect(await ids({ recipient: typed })).toEqual([us2])
  expect(await ids({ recipient: 'ada.lovelace@example.com', period: '24h', limit: 10 })).toEqual([mail])
  expect(await ids({ recipient: NUMBERS.DE(5) })).toEqual([])
  await h.server.admin.createAccount('other')
  expect(await ids({ account: 'other', recipient: NUMBERS.US(2) })).toEqual([])
  const bad = await search(h, { recipient: 'hello' })
  expect([bad.status, bad.json.error]).toEqual([400, 'recipient must be a phone number in E.164 form (+14155550123) or an email address'])
  const field = await search(h, { recipient: NUMBERS.US(2), status: 'lost' })
  expect([field.status, field.json.error]).toEqual([400, "field 'status' is not valid: one of pending, approved, expired, locked, canceled, failed"])
  const found = await search(h, { recipient: NUMBERS.US(2) })
  expect(JSON.stringify(found.json)).not.toContain(NUMBERS.US(2).slice(1))
})

test('no recipient in a URL: the JSON GET and the page refuse one; the page form posts and does not push its URL', async () => {
  const h = await harness()
  await sent(h, NUMBERS.US(3))
  const get = await h.admin(`/console/api/verifications?recipient=${encodeURIComponent(NUMBERS.US(3))}`)
  expect(get.status).toBe(400)
  expect(get.json.error).toContain('POST the search to /console/api/verifications/search')
  const page = await h.admin('/console/verifications')
  expect(page.text).toMatch(/<form method="post" action="\/console\/verifications" hx-push-url="false"/)
  const posted = await h.admin('/console/verifications', { body: { recipient: NUMBERS.US(3), _csrf: h.session.csrf }, form: true, csrf: null })
  expect(posted.status).toBe(200)
  expect(posted.headers.get('location')).toBeNull()
  expect(posted.text).toContain('+*********03')
  expect(posted.text).not.toContain(NUMBERS.US(3).slice(1))
  const old = await h.admin(`/console/verifications?recipient=${encodeURIComponent(NUMBERS.US(3))}`)
  expect(old.status).toBe(400)
  // The search's own path takes POST only.
  const wrong = await h.admin(`${SEARCH}?recipient=${encodeURIComponent(NUMBERS.US(3))}`)
  expect([wrong.status, wrong.json.error]).toEqual([405, 'Method not allowed'])
})

test('the attack: candidates for one mask tried in a loop stop at the per-operator limit, each written to the audit log without the value', async () => {
  const h = await harness()
  // Found by the 51st candidate, were there no limit.
  const target = '+14155555099'
  await sent(h, target)
  // What the console shows of it: only the last two digits.
  const shown = (await h.admin('/console/api/verifications')).json.verifications[0].recipient
  expect(shown).toBe('+*********99')
  let found = false
  let refused = 0
  for (let i = 0; i < 100 && !found; i++) {
    const candidate = `+1415555${String(i).padStart(2, '0')}99`
    const r = await search(h, { recipient: candidate })
    if (r.status === 429) {
      refused++
      expect(r.json.error).toMatch(LIMITED)
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
      if (refused > 5) break
      continue
    }
    expect(r.status).toBe(200)
    found = r.json.verifications.length > 0
  }
  expect(found).toBe(false)
  const audit = (await h.admin(`/console/api/audit?action=recipient.searched&limit=1000`)).json.entries as Record<string, unknown>[]
  expect(audit.length).toBe(RECIPIENT_SEARCHES_PER_HOUR)
  expect(audit[0]).toMatchObject({
    operator: 'ops-alice',
    source: 'console',
    subject: 'verifications',
    details: { account: null, recipient: 'number', period: '24h' },
  })
  expect(JSON.stringify(audit)).not.toMatch(/1415555/)
  // Another operator has its own window; this one's opens again after an hour.
  await h.server.operators.add('ops-bob', 'another long password')
  const bob = await h.signIn('ops-bob', 'another long password')
  expect((await search(h, { recipient: target }, bob)).status).toBe(200)
  h.clock.advance(RECIPIENT_SEARCH_WINDOW_MS)
  expect((await search(h, { recipient: target })).json.verifications.length).toBe(1)
}, 60_000)

test('the console mask leaves at least 4 digits hidden even for a short number, and shows no more than the API mask', async () => {
  const h = await harness()
  for (const [number, console] of [
    ['+14155550199', '+*********99'],
    ['+35312345', '+******45'],
    ['+2991234', '+*******'],
  ] as const) {
    const id = await sent(h, number)
    const api = await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })
    const v = (await h.admin(`/console/api/verifications/${id}`)).json.verification
    expect({ number, console: v.recipient }).toEqual({ number, console })
    for (let i = 0; i < console.length; i++) if (console[i] !== '*') expect(api.json.recipient[i]).toBe(console[i])
    expect((console.match(/\*/g) ?? []).length).toBeGreaterThanOrEqual(number.length - 3)
  }
  const mail = await sent(h, 'someone.long@example.com', 'email')
  expect((await h.admin(`/console/api/verifications/${mail}`)).json.verification.recipient).toBe('s***@example.com')
})

test('a full number finds the sends of it the fraud guard refused too, with the rule; another number finds none', async () => {
  const h = closeAfterTest(await consoleHarness({ credits: 100, config: { fraud: { allowed_countries: ['US'] } } }))
  const refused = '+998901234567'
  expect((await h.send({ channel: 'sms', recipient: refused })).status).toBe(403)
  await h.server.storage.settled()
  const r = await search(h, { recipient: '+998 90 123 45 67' })
  expect(r.status).toBe(200)
  expect(r.json.verifications).toEqual([])
  expect(r.json.refusals).toEqual([
    {
      event_id: expect.any(String),
      account: 'default',
      occurred_at: expect.any(String),
      channel: 'sms',
      recipient: '+**********67',
      rule: 'geo',
      country: 'UZ',
    },
  ])
  expect(JSON.stringify(r.json)).not.toContain('99890123')
  expect((await search(h, { recipient: '+998901234568' })).json.refusals).toEqual([])
  // The page shows them under the verifications.
  const page = await h.admin('/console/verifications', { body: { recipient: refused, _csrf: h.session.csrf }, form: true, csrf: null })
  expect(page.text).toContain('id="refusals"')
  expect(page.text).toContain('+**********67')
  // Only a search by recipient counts them.
  expect((await search(h, { country: 'UZ' })).json.refusals).toEqual([])
})
