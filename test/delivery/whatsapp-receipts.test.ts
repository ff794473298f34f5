/**
 * Meta's webhook at /api/v1/receipts/{provider} (docs/delivery.md#whatsapp-receipts):
 * the subscription handshake, and status notifications signed as Meta signs
 * them (`X-Hub-Signature-256: sha256=` and the hex HMAC-SHA256 of the raw
 * body under the app secret, computed here with node:crypto, independently
 * of src/). Several statuses per notification, in any order; unknown ids;
 * `read` before `delivered`; duplicates; a forged, re-serialized or unsigned
 * body changes nothing.
 */
import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import type { Harness } from '../kit/harness.ts'
import { eventBodies, META_ENV, metaAccepted, metaSetup } from '../kit/whatsapp.ts'

const APP_SECRET = META_ENV.WHATSAPP_APP_SECRET
const PATH = '/api/v1/receipts/meta'

const sign = (body: string | Uint8Array, secret = APP_SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`

async function post(h: Harness, body: string, headers: Record<string, string>) {
  const res = await h.server.http.handle(
    new Request(`http://127.0.0.1:8080${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }),
  )
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

/** A status as Meta's `messages` webhook reference shows it. */
function status(id: string, state: string, more: Record<string, unknown> = {}) {
  return {
    id,
    status: state,
    timestamp: '1750857384',
    recipient_id: '5511987654321',
    ...(state === 'failed'
      ? {}
      : {
          conversation: { id: 'a75d17ad06104c51166f948319b03c6a', origin: { type: 'authentication' } },
          pricing: { billable: true, pricing_model: 'PMP', category: 'authentication' },
        }),
    ...more,
  }
}

/** A notification of the `messages` field, with its statuses in one change, pretty-printed as Meta sends it (spaces and all). */
function notification(statuses: unknown[]): string {
  const body = {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' }, statuses },
            field: 'messages',
          },
        ],
      },
    ],
  }
  return JSON.stringify(body, null, 1)
}

/** Three sends through the stub, each answered with its own message id; returns their verification ids. */
async function threeSends(h: Harness): Promise<string[]> {
  const ids: string[] = []
  for (const n of ['+5511987650001', '+5511987650002', '+5511987650003']) {
    const r = await h.send({ channel: 'whatsapp', recipient: n })
    expect(r.status).toBe(200)
    ids.push(r.json.verification_id)
  }
  await h.server.storage.settled()
  return ids
}

const deliveryOf = async (h: Harness, id: string) =>
  (await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers: {} })).json.delivery as Record<string, unknown>

describe('the handshake (GET)', () => {
  test('hub.mode=subscribe with the verify token: 200 and hub.challenge as the body', async () => {
    const { h } = await metaSetup()
    const q = new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.challenge': '1158201444', 'hub.verify_token': META_ENV.WHATSAPP_VERIFY_TOKEN })
    const res = await h.server.http.handle(new Request(`http://127.0.0.1:8080${PATH}?${q}`))
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('1158201444')
  })

  test.each([
    ['a wrong token', { 'hub.mode': 'subscribe', 'hub.challenge': '1158201444', 'hub.verify_token': 'verify-me-0124' }],
    ['another mode', { 'hub.mode': 'unsubscribe', 'hub.challenge': '1158201444', 'hub.verify_token': META_ENV.WHATSAPP_VERIFY_TOKEN }],
    ['no token', { 'hub.mode': 'subscribe', 'hub.challenge': '1158201444' }],
    ['no challenge', { 'hub.mode': 'subscribe', 'hub.verify_token': META_ENV.WHATSAPP_VERIFY_TOKEN }],
  ])('%s: 403', async (_name, params) => {
    const { h } = await metaSetup()
    const res = await h.server.http.handle(new Request(`http://127.0.0.1:8080${PATH}?${new URLSearchParams(params)}`))
    expect(res.status).toBe(403)
    expect(((await res.json()) as Record<string, unknown>).error).toBe('Invalid signature')
  })

  test('receipts off (no server.public_url): 404', async () => {
    const { h } = await metaSetup({ publicUrl: false })
    const q = new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.challenge': '1', 'hub.verify_token': META_ENV.WHATSAPP_VERIFY_TOKEN })
    expect((await h.server.http.handle(new Request(`http://127.0.0.1:8080${PATH}?${q}`))).status).toBe(404)
  })
})

describe('status notifications (POST)', () => {
  test('one notification with several statuses for several verifications, in any order, moves each; unknown ids are acknowledged', async () => {
    let n = 0
    const { h } = await metaSetup({ answer: () => metaAccepted(`wamid.M${++n}`) })
    const [a, b, c] = await threeSends(h)
    const body = notification([
      status('wamid.M3', 'failed', {
        errors: [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message Undeliverable.' } }],
      }),
      status('wamid.M1', 'delivered'),
      status('wamid.UNKNOWN', 'delivered'),
      status('wamid.M2', 'sent'),
    ])
    const r = await post(h, body, { 'x-hub-signature-256': sign(body) })
    expect(r.status).toBe(200)
    expect(r.json.success).toBe(true)
    expect(await deliveryOf(h, a!)).toMatchObject({ status: 'delivered', provider: 'meta' })
    expect(await deliveryOf(h, b!)).toMatchObject({ status: 'accepted', provider: 'meta' })
    expect(await deliveryOf(h, c!)).toMatchObject({ status: 'undelivered', provider: 'meta', error: { code: '131026', title: 'Message undeliverable' } })
    const undelivered = await eventBodies(h, 'verification.undelivered')
    expect(undelivered.map((e) => e.data)).toEqual([expect.objectContaining({ provider: 'meta', error_code: '131026', error_title: 'Message undeliverable' })])
    expect(JSON.stringify(undelivered)).not.toContain('5511987650003')
  })

  test('a status names its verification by the id otpd gave as biz_opaque_callback_data, even before the send recorded the message id', async () => {
    const { h } = await metaSetup()
    const [a] = await threeSends(h)
    // Meta's id unknown here (another message), but the echoed verification id finds it.
    const body = notification([status('wamid.OTHER', 'read', { biz_opaque_callback_data: a })])
    expect((await post(h, body, { 'x-hub-signature-256': sign(body) })).status).toBe(200)
    expect(await deliveryOf(h, a!)).toMatchObject({ status: 'delivered' })
  })

  test('`read` before `delivered`: delivered once; duplicates and a late `sent` or `failed` change nothing', async () => {
    const { h } = await metaSetup()
    const [a] = await threeSends(h)
    const [row] = await h.sql('SELECT delivery_ref FROM verifications WHERE id = $1', [a])
    const wamid = row!.delivery_ref as string
    for (const s of ['read', 'delivered', 'read', 'sent', 'failed']) {
      const body = notification([status(wamid, s)])
      expect((await post(h, body, { 'x-hub-signature-256': sign(body) })).status).toBe(200)
    }
    expect(await deliveryOf(h, a!)).toMatchObject({ status: 'delivered' })
    expect(await eventBodies(h, 'verification.delivered')).toHaveLength(1)
    expect(await eventBodies(h, 'verification.undelivered')).toHaveLength(0)
  })

  test('a wrong signature, a body re-serialized after signing, an unsigned body, another secret: 403, nothing changes', async () => {
    const { h } = await metaSetup()
    const [a] = await threeSends(h)
    const [row] = await h.sql('SELECT delivery_ref FROM verifications WHERE id = $1', [a])
    const body = notification([status(row!.delivery_ref as string, 'delivered')])
    const signature = sign(body)
    const reserialized = JSON.stringify(JSON.parse(body))
    expect(reserialized).not.toBe(body)
    const tries: [string, Record<string, string>][] = [
      [body, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }],
      [reserialized, { 'x-hub-signature-256': signature }],
      [body, {}],
      [body, { 'x-hub-signature-256': sign(body, 'another-app-secret') }],
      [body, { 'x-hub-signature-256': signature.slice('sha256='.length) }],
      [body, { 'x-hub-signature': `sha1=${createHmac('sha1', APP_SECRET).update(body).digest('hex')}` }],
    ]
    for (const [text, headers] of tries) {
      const r = await post(h, text, headers)
      expect(r.status).toBe(403)
      expect(r.json.error).toBe('Invalid signature')
    }
    expect(await deliveryOf(h, a!)).toMatchObject({ status: 'accepted' })
    // The same body, signed right, then moves it.
    expect((await post(h, body, { 'x-hub-signature-256': signature })).status).toBe(200)
    expect(await deliveryOf(h, a!)).toMatchObject({ status: 'delivered' })
  })

  test('signed but not JSON: 400; inbound messages and other fields are acknowledged and move nothing', async () => {
    const { h } = await metaSetup()
    const [a] = await threeSends(h)
    const bad = '{"object":'
    expect((await post(h, bad, { 'x-hub-signature-256': sign(bad) })).status).toBe(400)
    const inbound = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        { id: '1', changes: [{ field: 'messages', value: { messages: [{ from: '16505551234', id: 'wamid.IN', type: 'text', text: { body: 'hi' } }] } }] },
      ],
    })
    expect((await post(h, inbound, { 'x-hub-signature-256': sign(inbound) })).status).toBe(200)
    expect(await deliveryOf(h, a!)).toMatchObject({ status: 'accepted' })
  })
})
