/** The `twilio` provider against a local stub asserting Twilio's documented Messages and Calls requests. */
import { expect, test } from 'bun:test'
import { ProviderOptions } from '../../src/delivery/options.ts'
import { RecipientRejectedError } from '../../src/delivery/provider.ts'
import { readTwilio, TwilioProvider } from '../../src/delivery/twilio-provider.ts'
import { outbound } from '../kit/outbound.ts'
import { startVendorStub } from '../kit/vendor-stub.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

const SID = 'AC' + '0123456789abcdef'.repeat(2)
const TOKEN = 'twilio-auth-token-0123456789'

function setup(answer?: (path: string) => Response) {
  const stub = startVendorStub((r) => answer?.(r.path) ?? Response.json({ sid: 'SM123', status: 'queued' }, { status: 201 }))
  closeAfterTest(stub)
  const o = new ProviderOptions(
    'twilio_main',
    { type: 'twilio', account_sid: SID, auth_token_env: 'TWILIO_AUTH_TOKEN', from: '+15005550006', base_url: stub.url },
    { TWILIO_AUTH_TOKEN: TOKEN },
  )
  const settings = readTwilio(o, ['sms', 'voice'])
  o.unknownKeys('twilio')
  expect(o.problems).toEqual([])
  return { stub, p: new TwilioProvider('twilio_main', settings) }
}

const msg = outbound

const basic = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`

test('SMS: POST /2010-04-01/Accounts/{sid}/Messages.json, form To, From, Body, Basic auth', async () => {
  const { stub, p } = setup()
  await p.send(msg({ text: 'Code: 424242 & more ünïcode' }), AbortSignal.timeout(5000))
  expect(stub.requests).toHaveLength(1)
  const r = stub.requests[0]!
  expect(r.method).toBe('POST')
  expect(r.path).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`)
  expect(r.headers.authorization).toBe(basic)
  expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded')
  expect(r.body).toBe('To=%2B14155550123&From=%2B15005550006&Body=Code%3A+424242+%26+more+%C3%BCn%C3%AFcode')
  expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({ To: '+14155550123', From: '+15005550006', Body: 'Code: 424242 & more ünïcode' })
})

test('voice: POST .../Calls.json with inline TwiML: the words as written, the code digit by digit with pauses, all twice, escaped', async () => {
  const { stub, p } = setup()
  await p.send(msg({ channel: 'voice', text: 'Your code is 4, 2, 4, 2, 4, 2 <&>' }), AbortSignal.timeout(5000))
  const r = stub.requests[0]!
  expect(r.path).toBe(`/2010-04-01/Accounts/${SID}/Calls.json`)
  expect(r.headers.authorization).toBe(basic)
  const form = Object.fromEntries(new URLSearchParams(r.body))
  expect(Object.keys(form)).toEqual(['To', 'From', 'Twiml'])
  expect(form.To).toBe('+14155550123')
  const once =
    '<Say language="en-US">Your code is</Say><Pause length="1"/>' +
    '<Say language="en-US">4</Say><Pause length="1"/><Say language="en-US">2</Say><Pause length="1"/>' +
    '<Say language="en-US">4</Say><Pause length="1"/><Say language="en-US">2</Say><Pause length="1"/>' +
    '<Say language="en-US">4</Say><Pause length="1"/><Say language="en-US">2</Say><Pause length="1"/>' +
    '<Say language="en-US">&lt;&amp;&gt;</Say>'
  expect(form.Twiml).toBe(`<Response>${once}<Pause length="1"/>${once}</Response>`)
  expect(r.body).toBe(`To=%2B14155550123&From=%2B15005550006&Twiml=${encodeURIComponent(form.Twiml!).replace(/%20/g, '+')}`)
})

test('voice in Spanish: every <Say> names es-ES; words after the code and quotes in the template are said, escaped', async () => {
  const { stub, p } = setup()
  await p.send(msg({ channel: 'voice', locale: 'es', code: '1234', text: '"Hola", tu código: 1, 2, 3, 4. Vence pronto.' }), AbortSignal.timeout(5000))
  const form = Object.fromEntries(new URLSearchParams(stub.requests[0]!.body))
  const once =
    '<Say language="es-ES">&quot;Hola&quot;, tu código:</Say><Pause length="1"/>' +
    '<Say language="es-ES">1</Say><Pause length="1"/><Say language="es-ES">2</Say><Pause length="1"/>' +
    '<Say language="es-ES">3</Say><Pause length="1"/><Say language="es-ES">4</Say><Pause length="1"/>' +
    '<Say language="es-ES">. Vence pronto.</Say>'
  expect(form.Twiml).toBe(`<Response>${once}<Pause length="1"/>${once}</Response>`)
})

test('voice in a language Twilio lacks: no language attribute (its default voice); a code written as plain digits is found too', async () => {
  const { stub, p } = setup()
  await p.send(msg({ channel: 'voice', locale: 'sw', code: '9081', text: "Nambari yako ni 9081 ' 19081" }), AbortSignal.timeout(5000))
  const form = Object.fromEntries(new URLSearchParams(stub.requests[0]!.body))
  const once =
    '<Say>Nambari yako ni</Say><Pause length="1"/>' +
    '<Say>9</Say><Pause length="1"/><Say>0</Say><Pause length="1"/><Say>8</Say><Pause length="1"/><Say>1</Say><Pause length="1"/>' +
    '<Say>&apos; 19081</Say>'
  expect(form.Twiml).toBe(`<Response>${once}<Pause length="1"/>${once}</Response>`)
})

test('an invalid-number error (400, Twilio error 21211) is a rejected recipient; the error carries no vendor text', async () => {
  const { p } = setup(() => Response.json({ code: 21211, message: "The 'To' number +14155550123 is not a valid phone number.", status: 400 }, { status: 400 }))
  const err = await p.send(msg(), AbortSignal.timeout(5000)).catch((e) => e)
  expect(err).toBeInstanceOf(RecipientRejectedError)
  expect(err.message).toBe('twilio Messages answered 400 (error 21211)')
})

test('authentication failure and 5xx are plain failures (the next provider is tried)', async () => {
  for (const [status, code] of [
    [401, 20003],
    [503, undefined],
    [429, 20429],
  ] as const) {
    const { p } = setup(() => Response.json(code ? { code, message: 'x', status } : {}, { status }))
    const err = await p.send(msg(), AbortSignal.timeout(5000)).catch((e) => e)
    expect(err).not.toBeInstanceOf(RecipientRejectedError)
    expect(err.message).toBe(`twilio Messages answered ${status}${code ? ` (error ${code})` : ''}`)
    expect(err.message).not.toContain(TOKEN)
  }
})

test('config: sid shape, token variable, sender', () => {
  const o = new ProviderOptions('t', { type: 'twilio', account_sid: 'AC123', auth_token_env: 'TWILIO_AUTH_TOKEN', from: 'not a number!', extra: 1 }, {})
  readTwilio(o, ['sms'])
  o.unknownKeys('twilio')
  expect(o.problems).toEqual([
    'providers.t.account_sid must be "AC" followed by 32 hex digits',
    'providers.t.auth_token_env names TWILIO_AUTH_TOKEN, which is not set',
    'providers.t.from must be an E.164 number or an alphanumeric sender ID of up to 11 characters',
    "providers.t.extra is not a setting of a 'twilio' provider",
  ])
})

test('receipts on: Messages and Calls carry StatusCallback = the receipt URL with the verification id, after the other fields', async () => {
  const { stub } = setup()
  const o = new ProviderOptions(
    'twilio_main',
    { type: 'twilio', account_sid: SID, auth_token_env: 'TWILIO_AUTH_TOKEN', from: '+15005550006', base_url: stub.url },
    { TWILIO_AUTH_TOKEN: TOKEN },
  )
  const p = new TwilioProvider('twilio_main', readTwilio(o, ['sms', 'voice']), 'https://otp.example.com/api/v1/receipts/twilio_main')
  await p.send(msg(), AbortSignal.timeout(5000))
  await p.send(msg({ channel: 'voice', text: '4, 2' }), AbortSignal.timeout(5000))
  const callback = 'https%3A%2F%2Fotp.example.com%2Fapi%2Fv1%2Freceipts%2Ftwilio_main%3Fverification_id%3D9a7c0c1e-0000-4000-8000-000000000001'
  expect(stub.requests[0]!.body).toBe(`To=%2B14155550123&From=%2B15005550006&Body=Your+verification+code+is%3A+424242&StatusCallback=${callback}`)
  expect(Object.keys(Object.fromEntries(new URLSearchParams(stub.requests[1]!.body)))).toEqual(['To', 'From', 'Twiml', 'StatusCallback'])
  expect(stub.requests[1]!.body.endsWith(`&StatusCallback=${callback}`)).toBe(true)
})
