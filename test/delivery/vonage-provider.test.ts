/** The `vonage` provider against a local stub asserting the SMS API and Voice API requests, JWT included. */
import { expect, test } from 'bun:test'
import { createPublicKey, createVerify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ProviderOptions } from '../../src/delivery/options.ts'
import { RecipientRejectedError } from '../../src/delivery/provider.ts'
import { readVonage, VonageProvider } from '../../src/delivery/vonage-provider.ts'
import { outbound, OUTBOUND_AT } from '../kit/outbound.ts'
import { startVendorStub } from '../kit/vendor-stub.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

const KEY_FILE = join(import.meta.dir, '..', 'kit', 'fixtures', 'tls', 'vonage-app.key')
const PUBLIC = createPublicKey(readFileSync(join(import.meta.dir, '..', 'kit', 'fixtures', 'tls', 'vonage-app.pub')))
const APP_ID = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'
const SECRET = 'vonage-api-secret-xyz'
const NOW = OUTBOUND_AT

const smsOk = () => Response.json({ 'message-count': '1', messages: [{ to: '14155550123', 'message-id': '0C00', status: '0' }] })

function setup(
  answer: (path: string) => Response = (path) => (path === '/v1/calls' ? Response.json({ uuid: 'u', status: 'started' }, { status: 201 }) : smsOk()),
) {
  const stub = startVendorStub((r) => answer(r.path))
  closeAfterTest(stub)
  const o = new ProviderOptions(
    'vonage_main',
    {
      type: 'vonage',
      api_key: 'abcd1234',
      api_secret_env: 'VONAGE_API_SECRET',
      application_id: APP_ID,
      private_key_file: KEY_FILE,
      from: 'Acme',
      voice_from: '+14155550100',
      base_url: stub.url,
      voice_base_url: stub.url,
    },
    { VONAGE_API_SECRET: SECRET },
  )
  const settings = readVonage(o, ['sms', 'voice'])
  o.unknownKeys('vonage')
  expect(o.problems).toEqual([])
  return { stub, p: new VonageProvider('vonage_main', settings, () => NOW) }
}

const msg = outbound

test('SMS: POST /sms/json, form api_key, api_secret, from, to without "+", text', async () => {
  const { stub, p } = setup()
  await p.send(msg(), AbortSignal.timeout(5000))
  const r = stub.requests[0]!
  expect([r.method, r.path]).toEqual(['POST', '/sms/json'])
  expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded')
  expect(r.headers.authorization).toBeUndefined()
  expect(r.body).toBe(`api_key=abcd1234&api_secret=${SECRET}&from=Acme&to=14155550123&text=Your+verification+code+is%3A+424242`)
})

test('SMS with non-ASCII text is sent as type=unicode', async () => {
  const { stub, p } = setup()
  await p.send(msg({ text: 'Ваш код: 424242' }), AbortSignal.timeout(5000))
  expect(Object.fromEntries(new URLSearchParams(stub.requests[0]!.body))).toMatchObject({ text: 'Ваш код: 424242', type: 'unicode' })
})

test('SMS status: 0 is success, 6 (unrecognised prefix) rejects the recipient, others fail over', async () => {
  for (const [status, rejected] of [
    ['6', true],
    ['1', false],
    ['4', false],
  ] as const) {
    const { p } = setup(() => Response.json({ 'message-count': '1', messages: [{ status, 'error-text': 'about +14155550123' }] }))
    const err = await p.send(msg(), AbortSignal.timeout(5000)).catch((e) => e)
    expect(err.message).toBe(`vonage sms status ${status}`)
    expect(err instanceof RecipientRejectedError).toBe(rejected)
  }
})

test('voice: POST /v1/calls with an RS256 JWT from the application key and a talk NCCO: SSML words, digits with breaks, read twice', async () => {
  const { stub, p } = setup()
  await p.send(msg({ channel: 'voice', text: 'Your code is 4, 2, 4, 2, 4, 2' }), AbortSignal.timeout(5000))
  const r = stub.requests[0]!
  expect([r.method, r.path]).toEqual(['POST', '/v1/calls'])
  expect(r.headers['content-type']).toBe('application/json')
  expect(JSON.parse(r.body)).toEqual({
    to: [{ type: 'phone', number: '14155550123' }],
    from: { type: 'phone', number: '14155550100' },
    ncco: [
      {
        action: 'talk',
        text: "<speak>Your code is<break time='1s'/>4<break time='500ms'/>2<break time='500ms'/>4<break time='500ms'/>2<break time='500ms'/>4<break time='500ms'/>2<break time='1s'/></speak>",
        language: 'en-US',
        loop: 2,
      },
    ],
  })
  expect(r.body).toBe(
    '{"to":[{"type":"phone","number":"14155550123"}],"from":{"type":"phone","number":"14155550100"},"ncco":[{"action":"talk","text":"<speak>Your code is<break time=\'1s\'/>4<break time=\'500ms\'/>2<break time=\'500ms\'/>4<break time=\'500ms\'/>2<break time=\'500ms\'/>4<break time=\'500ms\'/>2<break time=\'1s\'/></speak>","language":"en-US","loop":2}]}',
  )
  const token = /^Bearer (.+)$/.exec(r.headers.authorization!)![1]!
  const [h, c, s] = token.split('.') as [string, string, string]
  expect(JSON.parse(Buffer.from(h, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT' })
  const claims = JSON.parse(Buffer.from(c, 'base64url').toString())
  expect(claims).toMatchObject({ application_id: APP_ID, iat: NOW / 1000, exp: NOW / 1000 + 300 })
  expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/)
  expect(createVerify('RSA-SHA256').update(`${h}.${c}`).verify(PUBLIC, Buffer.from(s, 'base64url'))).toBe(true)
})

test("voice in Brazilian Portuguese: language pt-BR; the template's <, & and quotes are escaped in the SSML; words after the code are said", async () => {
  const { stub, p } = setup()
  await p.send(
    msg({ channel: 'voice', locale: 'pt-BR', code: '5678', text: 'Seu código <Acme & "Co">: 5, 6, 7, 8. Não compartilhe.' }),
    AbortSignal.timeout(5000),
  )
  expect(JSON.parse(stub.requests[0]!.body).ncco).toEqual([
    {
      action: 'talk',
      text: "<speak>Seu código &lt;Acme &amp; &quot;Co&quot;&gt;:<break time='1s'/>5<break time='500ms'/>6<break time='500ms'/>7<break time='500ms'/>8<break time='1s'/>. Não compartilhe.<break time='1s'/></speak>",
      language: 'pt-BR',
      loop: 2,
    },
  ])
})

test('voice in a language Vonage lacks: no language (its default voice), the words and digits still apart', async () => {
  const { stub, p } = setup()
  await p.send(msg({ channel: 'voice', locale: 'ms', code: '2468', text: "Kod anda: 2, 4, 6, 8 's" }), AbortSignal.timeout(5000))
  expect(JSON.parse(stub.requests[0]!.body).ncco).toEqual([
    {
      action: 'talk',
      text: "<speak>Kod anda:<break time='1s'/>2<break time='500ms'/>4<break time='500ms'/>6<break time='500ms'/>8<break time='1s'/>&apos;s<break time='1s'/></speak>",
      loop: 2,
    },
  ])
})

test('voice: 400 naming "to" rejects the recipient; 401 and 5xx fail over', async () => {
  const { p } = setup(() => Response.json({ title: 'Bad Request', invalid_parameters: [{ name: 'to[0].number', reason: 'invalid' }] }, { status: 400 }))
  const err = await p.send(msg({ channel: 'voice' }), AbortSignal.timeout(5000)).catch((e) => e)
  expect(err).toBeInstanceOf(RecipientRejectedError)
  for (const status of [401, 500]) {
    const { p: q } = setup(() => Response.json({}, { status }))
    const e = await q.send(msg({ channel: 'voice' }), AbortSignal.timeout(5000)).catch((x) => x)
    expect(e).not.toBeInstanceOf(RecipientRejectedError)
    expect(e.message).toBe(`vonage calls answered ${status}`)
  }
})

test('config: what SMS needs and what voice needs, by the channels that use the provider', () => {
  const o = new ProviderOptions('v', { type: 'vonage', from: 'Acme' }, {})
  readVonage(o, ['sms', 'voice'])
  expect(o.problems).toEqual([
    "providers.v.api_key is missing: this provider sends SMS, which needs the account's API key",
    'providers.v.api_secret_env is missing: this provider sends SMS: name the environment variable holding the API secret, such as VONAGE_API_SECRET',
    'providers.v.application_id is missing: this provider places calls, which needs a Voice application id',
    "providers.v.private_key_file is missing: this provider places calls, which needs the Voice application's private key file",
    'providers.v.from must be a Vonage number to place calls (got "Acme"); set voice_from to one of your Vonage numbers',
  ])
  const smsOnly = new ProviderOptions('v', { type: 'vonage', api_key: 'k', api_secret_env: 'S', from: 'Acme' }, { S: 'x' })
  readVonage(smsOnly, ['sms'])
  expect(smsOnly.problems).toEqual([])
  const badKey = new ProviderOptions(
    'v',
    { type: 'vonage', application_id: APP_ID, private_key_file: join(import.meta.dir, '..', 'kit', 'fixtures', 'tls', 'ca.pem'), from: '14155550100' },
    {},
  )
  readVonage(badKey, ['voice'])
  expect(badKey.problems).toEqual(['providers.v.private_key_file does not hold an RSA private key in PEM form'])
})

test('receipts on: an SMS asks for a delivery receipt at the receipt URL, with the verification id as client-ref; a call asks for none', async () => {
  const { stub } = setup()
  const o = new ProviderOptions(
    'vonage_main',
    {
      type: 'vonage',
      api_key: 'abcd1234',
      api_secret_env: 'VONAGE_API_SECRET',
      signature_secret_env: 'SIG',
      application_id: APP_ID,
      private_key_file: KEY_FILE,
      from: 'Acme',
      voice_from: '+14155550100',
      base_url: stub.url,
      voice_base_url: stub.url,
    },
    { VONAGE_API_SECRET: SECRET, SIG: 'sig-secret' },
  )
  const settings = readVonage(o, ['sms', 'voice'], true)
  o.unknownKeys('vonage')
  expect(o.problems).toEqual([])
  const p = new VonageProvider('vonage_main', settings, () => NOW, 'https://otp.example.com/api/v1/receipts/vonage_main')
  await p.send(msg(), AbortSignal.timeout(5000))
  expect(stub.requests[0]!.body).toBe(
    `api_key=abcd1234&api_secret=${SECRET}&from=Acme&to=14155550123&text=Your+verification+code+is%3A+424242` +
      '&status-report-req=1&callback=https%3A%2F%2Fotp.example.com%2Fapi%2Fv1%2Freceipts%2Fvonage_main&client-ref=9a7c0c1e-0000-4000-8000-000000000001',
  )
  await p.send(msg({ channel: 'voice', text: '4, 2' }), AbortSignal.timeout(5000))
  expect(Object.keys(JSON.parse(stub.requests[1]!.body))).toEqual(['to', 'from', 'ncco'])
})
