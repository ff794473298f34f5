/**
 * The console's verification search and detail (docs/console.md#verifications):
 * by id, by a recipient typed in (found through its hash, never stored in
 * clear), by country, status and period, newest first a page at a time; a
 * verification's timeline from its stored events. Recipients are masked.
 */
import { expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { harnessPerTest, MINUTE } from '../kit/harness.ts'
import { consoleOf, NUMBERS } from '../kit/console.ts'
import { META_ENV, metaSetup } from '../kit/whatsapp.ts'

const start = harnessPerTest({ credits: 100 })

async function sent(h: Awaited<ReturnType<typeof start>>, recipient: string, channel = 'sms') {
  const r = await h.send({ channel, recipient })
  expect(r.status).toBe(200)
  // Its outcome is recorded just after the answer (docs/api.md#events): let it land before what follows.
  await h.server.storage.settled()
  h.clock.advance(1000)
  return { id: r.json.verification_id as string, code: h.delivery.lastCode() }
}

test('search: newest first, by country, status, recipient and id; masked recipients; pages by cursor', async () => {
  const h = await start()
  const c = consoleOf(h)
  const us1 = await sent(h, NUMBERS.US(1))
  const gb = await sent(h, NUMBERS.GB(1))
  const us2 = await sent(h, NUMBERS.US(2))
  const mail = await sent(h, 'Ada.Lovelace+otp@Example.com', 'email')
  expect((await h.verify({ verification_id: us2.id, code: us2.code })).status).toBe(200)
  const ids = async (q: string) => {
    const r = await c.get(`/console/api/verifications${q}`)
    expect(r.status).toBe(200)
    return (r.json.verifications as any[]).map((v) => v.verification_id)
  }
  expect(await ids('')).toEqual([mail.id, us2.id, gb.id, us1.id])
  expect(await ids('?country=US')).toEqual([us2.id, us1.id])
  expect(await ids('?status=approved')).toEqual([us2.id])
  expect(await ids('?status=pending&country=US')).toEqual([us1.id])
  expect(await ids(`?id=${gb.id}`)).toEqual([gb.id])
  // By recipient: a POST (test/console/recipient-search.test.ts).

  const one = await c.get(`/console/api/verifications?id=${us2.id}`)
  const v = one.json.verifications[0]
  expect(v).toMatchObject({ account: 'default', channel: 'sms', country: 'US', status: 'approved', test: false })
  expect(v.recipient).toBe('+*********02')
  expect(JSON.stringify(one.json)).not.toContain(NUMBERS.US(2))
  expect(Object.keys(v)).not.toContain('recipient_hash')

  // A page at a time.
  let cursor: string | null = null
  const seen: string[] = []
  do {
    const r: any = await c.get(`/console/api/verifications?limit=1${cursor ? `&cursor=${cursor}` : ''}`)
    seen.push(...r.json.verifications.map((x: any) => x.verification_id))
    cursor = r.json.next
  } while (cursor !== null)
  expect(seen).toEqual([mail.id, us2.id, gb.id, us1.id])

  // Another account sees none of them.
  await h.server.admin.createAccount('other')
  expect(await ids('?account=other')).toEqual([])
  // Out of the period: the 1 h period no longer holds them an hour later.
  h.clock.advance(61 * MINUTE)
  expect(await ids('?period=1h')).toEqual([])
  expect(await ids('?period=24h')).toHaveLength(4)
})

test('search: bad parameters are 400s', async () => {
  const h = await start()
  const c = consoleOf(h)
  const bad = async (q: string, error: string) => {
    const r = await c.get(`/console/api/verifications${q}`, { rollup: false })
    expect(r.status).toBe(400)
    expect(r.json.error).toBe(error)
  }
  await bad('?cursor=abc', "cursor is not valid: pass the 'next' of the previous page")
  await bad(
    `?recipient=${encodeURIComponent(NUMBERS.US(2))}`,
    'recipient is not taken in a URL, where it would stay in histories and logs: POST the search to /console/api/verifications/search',
  )
  await bad('?status=lost', "query parameter 'status' is not valid: one of pending, approved, expired, locked, canceled, failed")
  await bad('?country=usa', "query parameter 'country' is not valid: ISO 3166-1 alpha-2 (ZZ: no known country).")
  await bad('?limit=0', "query parameter 'limit' is not valid: rows per page, 1-200 (default 50).")
  await bad('?limit=500', "query parameter 'limit' is not valid: rows per page, 1-200 (default 50).")
})

test('detail: the verification, masked, and its timeline: created, sent, attempts, lockout', async () => {
  const h = await start({ config: { limits: { max_failed_attempts: 2 } } })
  const c = consoleOf(h)
  const v = await sent(h, NUMBERS.GB(2))
  const wrong = v.code === '000000' ? '111111' : '000000'
  await h.verify({ verification_id: v.id, code: wrong })
  await h.verify({ verification_id: v.id, code: wrong })
  const r = await c.get(`/console/api/verifications/${v.id}`, { rollup: false })
  expect(r.status).toBe(200)
  expect(r.json.verification).toMatchObject({ verification_id: v.id, country: 'GB', status: 'locked', failed_attempts: 2 })
  expect(r.json.timeline.map((e: any) => e.type)).toEqual([
    'created',
    'verification.sent',
    'verification.attempt_failed',
    'verification.attempt_failed',
    'verification.locked',
  ])
  expect(r.json.timeline[1].data.provider).toBe('recording')
  expect(JSON.stringify(r.json)).not.toContain(NUMBERS.GB(2))

  const gone = await c.get('/console/api/verifications/00000000-0000-4000-8000-000000000000', { rollup: false })
  expect(gone.status).toBe(404)
  expect(gone.json.error).toBe('verification not found')
})

test('detail: a failed delivery and a cancel are on the timeline', async () => {
  const h = await start()
  const c = consoleOf(h)
  h.delivery.fail = true
  await h.send({ channel: 'sms', recipient: NUMBERS.US(7) })
  h.delivery.fail = false
  const [failed] = (await c.get('/console/api/verifications?status=failed')).json.verifications
  const f = await c.get(`/console/api/verifications/${failed.verification_id}`, { rollup: false })
  expect(f.json.timeline.map((e: any) => e.type)).toEqual(['created', 'verification.delivery_failed'])
  expect(f.json.verification.delivery.status).toBe('failed')

  const v = await sent(h, NUMBERS.US(8))
  expect((await h.call(`/api/v1/verifications/${v.id}/cancel`, {})).status).toBe(200)
  const x = await c.get(`/console/api/verifications/${v.id}`, { rollup: false })
  expect(x.json.timeline.map((e: any) => e.type)).toEqual(['created', 'verification.sent', 'verification.canceled'])
  expect(x.json.verification.status).toBe('canceled')
})

test("detail: a WhatsApp send's template language, and a vendor's error once undelivered", async () => {
  const { h } = await metaSetup()
  const c = consoleOf(h)
  const r = await h.send({ channel: 'whatsapp', recipient: NUMBERS.GB(3), locale: 'es' })
  expect(r.status).toBe(200)
  const before = await c.get(`/console/api/verifications/${r.json.verification_id}`, { rollup: false })
  expect(before.json.verification).toMatchObject({ channel: 'whatsapp', delivery: { status: 'accepted', provider: 'meta', language: 'es' } })
  expect(before.json.timeline[1].data).toMatchObject({ provider: 'meta', language: 'es' })
  const [row] = await h.sql('SELECT delivery_ref FROM verifications WHERE id = $1', [r.json.verification_id])
  const error = { code: 131026, title: 'Message undeliverable' }
  const body = JSON.stringify({
    entry: [{ changes: [{ field: 'messages', value: { statuses: [{ id: row!.delivery_ref, status: 'failed', errors: [error] }] } }] }],
  })
  const signature = `sha256=${createHmac('sha256', META_ENV.WHATSAPP_APP_SECRET).update(body).digest('hex')}`
  const posted = await h.server.http.handle(
    new Request('http://127.0.0.1:8080/api/v1/receipts/meta', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body,
    }),
  )
  expect(posted.status).toBe(200)
  const after = await c.get(`/console/api/verifications/${r.json.verification_id}`, { rollup: false })
  expect(after.json.verification.delivery).toMatchObject({ status: 'undelivered', error: { code: '131026', title: 'Message undeliverable' } })
})
