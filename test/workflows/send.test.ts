/**
 * A send with `workflow` (docs/api.md#workflows): every 400 with its message
 * and nothing written or charged; one verification and one code for the
 * workflow, its first step delivered as a plain send; every step recorded,
 * what a later step delivers sealed; the status listing the steps.
 */
import { describe, expect, test } from 'bun:test'
import { balance } from '../kit/fraud.ts'
import { expectError, harnessPerTest, type Harness, TEST } from '../kit/harness.ts'

const start = harnessPerTest({ credits: 5 })
const status = (h: Harness, id: string) => h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers: {} })
const rows = async (h: Harness) => Number((await h.sql('SELECT count(*) AS n FROM verifications'))[0]!.n)
const stepRows = async (h: Harness) => Number((await h.sql('SELECT count(*) AS n FROM verification_steps'))[0]!.n)

const PHONE = '+919812345678'
const STEP_PHONE = (n: number) => `workflow step ${n}: recipient must be a valid E.164 phone number for SMS, voice and WhatsApp`
const STEP_EMAIL = (n: number) => `workflow step ${n}: recipient must be a valid email address for the email channel`
const STEP_CHANNEL = (n: number) => `workflow step ${n}: channel must be one of: sms, email, voice, whatsapp`

describe('400s: each with its message, nothing written or charged', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['channel and workflow', { channel: 'sms', recipient: PHONE, workflow: [{ channel: 'sms' }] }, 'channel and workflow cannot both be given'],
    ['an empty workflow', { recipient: PHONE, workflow: [] }, 'workflow must be a list of 1 to 3 steps'],
    [
      'four steps',
      { recipient: PHONE, workflow: ['sms', 'voice', 'whatsapp', 'email'].map((channel) => ({ channel })) },
      'workflow must be a list of 1 to 3 steps',
    ],
    ['workflow not a list', { recipient: PHONE, workflow: { channel: 'sms' } }, 'workflow must be a list of 1 to 3 steps'],
    ['workflow null', { recipient: PHONE, workflow: null }, 'workflow must be a list of 1 to 3 steps'],
    ['a step not an object', { recipient: PHONE, workflow: [{ channel: 'sms' }, 'voice'] }, STEP_CHANNEL(2)],
    ['a step without a channel', { recipient: PHONE, workflow: [{ recipient: PHONE }] }, STEP_CHANNEL(1)],
    ['a step with an unknown channel', { recipient: PHONE, workflow: [{ channel: 'sms' }, { channel: 'fax' }] }, STEP_CHANNEL(2)],
    ['email after sms without its own recipient', { recipient: PHONE, workflow: [{ channel: 'sms' }, { channel: 'email' }] }, STEP_EMAIL(2)],
    [
      'a step with a wrong own recipient',
      { recipient: PHONE, workflow: [{ channel: 'sms' }, { channel: 'voice', recipient: 'ann@example.com' }] },
      STEP_PHONE(2),
    ],
    ['no recipient at all', { workflow: [{ channel: 'sms' }] }, STEP_PHONE(1)],
    [
      'a repeated step',
      { recipient: PHONE, workflow: [{ channel: 'sms' }, { channel: 'voice' }, { channel: 'sms', recipient: PHONE }] },
      'workflow step 3 repeats step 1',
    ],
    [
      'a repeated email step, in another letter case',
      {
        recipient: PHONE,
        workflow: [
          { channel: 'email', recipient: 'ann@example.com' },
          { channel: 'email', recipient: 'Ann@Example.com' },
        ],
      },
      'workflow step 2 repeats step 1',
    ],
    ['channel_timeout without workflow', { channel: 'sms', recipient: PHONE, channel_timeout: 60 }, 'channel_timeout is allowed only with workflow'],
    ['channel_timeout 14', { recipient: PHONE, workflow: [{ channel: 'sms' }], channel_timeout: 14 }, 'channel_timeout must be an integer between 15 and 900'],
    [
      'channel_timeout 901',
      { recipient: PHONE, workflow: [{ channel: 'sms' }], channel_timeout: 901 },
      'channel_timeout must be an integer between 15 and 900',
    ],
    [
      'channel_timeout as text',
      { recipient: PHONE, workflow: [{ channel: 'sms' }], channel_timeout: '60' },
      'channel_timeout must be an integer between 15 and 900',
    ],
    [
      'channel_timeout 30.5',
      { recipient: PHONE, workflow: [{ channel: 'sms' }], channel_timeout: 30.5 },
      'channel_timeout must be an integer between 15 and 900',
    ],
  ]
  test.each(cases)('%s', async (_name, body, error) => {
    const h = await start()
    expectError(await h.send(body), 400, error)
    expect(await balance(h)).toBe(5)
    expect(await rows(h)).toBe(0)
    expect(await stepRows(h)).toBe(0)
    expect(h.delivery.sent).toHaveLength(0)
  })

  test('the fields keep their order: a bad message after a bad workflow step reports the step', async () => {
    const h = await start()
    expectError(await h.send({ recipient: PHONE, workflow: [{ channel: 'fax' }], message: 'no placeholder' }), 400, STEP_CHANNEL(1))
    expectError(
      await h.send({ recipient: PHONE, workflow: [{ channel: 'sms' }], message: 'no placeholder', channel_timeout: 1 }),
      400,
      'message must contain the {code} placeholder',
    )
  })

  test('a later SMS over messages.sms_max_segments is refused with the send', async () => {
    const h = await start({ config: { messages: { sms_max_segments: 1 } } })
    const message = `${'x'.repeat(200)} {code}`
    expectError(
      await h.send({ recipient: 'ann@example.com', workflow: [{ channel: 'email' }, { channel: 'sms', recipient: PHONE }], message }),
      400,
      'message is longer than 1 SMS segments',
    )
    expect(await balance(h)).toBe(5)
    expect(await rows(h)).toBe(0)
  })

  test('the borders: 15 and 900 seconds, and three steps, are taken', async () => {
    const h = await start()
    for (const channel_timeout of [15, 900]) {
      const r = await h.send({ recipient: PHONE, workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }, { channel: 'voice' }], channel_timeout })
      expect(r.status).toBe(200)
    }
  })
})

describe('a workflow send', () => {
  test('one verification and one code: the first step is delivered and charged, every step recorded, the status lists them', async () => {
    const h = await start()
    const workflow = [{ channel: 'whatsapp' }, { channel: 'sms' }, { channel: 'email', recipient: 'ann@example.com' }]
    const r = await h.send({ recipient: PHONE, workflow, channel_timeout: 45 })
    expect(r.status).toBe(200)
    await h.server.storage.settled()
    expect(h.delivery.sent).toHaveLength(1)
    expect(h.delivery.sent[0]).toMatchObject({ channel: 'whatsapp', recipient: PHONE })
    expect(await balance(h)).toBe(4)
    const s = await status(h, r.json.verification_id)
    const created = Date.parse(s.json.created_at)
    expect(s.json).toMatchObject({ channel: 'whatsapp', status: 'pending', current_step: 0, channel_timeout: 45 })
    expect(s.json.delivery).toMatchObject({ status: 'accepted', provider: 'recording' })
    expect(s.json.steps).toEqual([
      {
        channel: 'whatsapp',
        recipient: '+9198*****678',
        provider: 'recording',
        delivery: 'accepted',
        started_at: s.json.created_at,
        due_at: null,
        ended_at: null,
        ended_reason: null,
      },
      {
        channel: 'sms',
        recipient: '+9198*****678',
        provider: null,
        delivery: null,
        started_at: null,
        due_at: new Date(created + 45_000).toISOString(),
        ended_at: null,
        ended_reason: null,
      },
      { channel: 'email', recipient: 'a*n@example.com', provider: null, delivery: null, started_at: null, due_at: null, ended_at: null, ended_reason: null },
    ])
    // The code verifies as any send's.
    expect((await h.verify({ verification_id: r.json.verification_id, code: h.delivery.lastCode() })).json.verified).toBe(true)
  })

  test('what a later step delivers is sealed: neither its recipient nor the code is in the database in clear', async () => {
    const h = await start()
    const r = await h.send({ recipient: PHONE, workflow: [{ channel: 'sms' }, { channel: 'email', recipient: 'grace.hopper@example.com' }], code: '98765432' })
    expect(r.status).toBe(200)
    const [first, second] = await h.sql('SELECT step, sealed FROM verification_steps ORDER BY step')
    expect(first!.sealed).toBeNull()
    const sealed = Buffer.from(second!.sealed as Uint8Array)
    expect(sealed.length).toBeGreaterThan(28)
    expect(sealed.includes('grace.hopper')).toBe(false)
    expect(sealed.includes('98765432')).toBe(false)
    expect(sealed.includes(PHONE)).toBe(false)
  })

  test('the default channel_timeout is 60 s, and a step due at or after expires_at is never due', async () => {
    const h = await start()
    const a = await h.send({ recipient: PHONE, workflow: [{ channel: 'sms' }, { channel: 'voice' }] })
    const sa = await status(h, a.json.verification_id)
    expect(sa.json.channel_timeout).toBe(60)
    expect(sa.json.steps[1].due_at).toBe(new Date(Date.parse(sa.json.created_at) + 60_000).toISOString())
    const b = await h.send({ recipient: '+919812345679', workflow: [{ channel: 'sms' }, { channel: 'voice' }], expires_in: 60 })
    expect((await status(h, b.json.verification_id)).json.steps[1].due_at).toBeNull()
  })

  test('one step is a workflow too; a plain send has no steps in its status', async () => {
    const h = await start()
    const one = await h.send({ recipient: PHONE, workflow: [{ channel: 'voice' }] })
    expect((await status(h, one.json.verification_id)).json.steps).toHaveLength(1)
    const plain = await h.send({ channel: 'sms', recipient: '+14155550123' })
    const s = await status(h, plain.json.verification_id)
    expect(s.json.steps).toBeUndefined()
    expect(s.json.current_step).toBeUndefined()
    expect(await stepRows(h)).toBe(1)
  })

  test('a test recipient first: nothing delivered or charged, the steps recorded with nothing sealed', async () => {
    const h = await start()
    const r = await h.send({ recipient: TEST.PHONE_SUCCESS, workflow: [{ channel: 'sms' }, { channel: 'email', recipient: 'ann@example.com' }] })
    expect(r.status).toBe(200)
    expect(h.delivery.sent).toHaveLength(0)
    expect(await balance(h)).toBe(5)
    expect((await h.sql('SELECT sealed FROM verification_steps WHERE sealed IS NOT NULL')).length).toBe(0)
    const s = await status(h, r.json.verification_id)
    expect(s.json.steps.map((x: Record<string, unknown>) => [x.channel, x.delivery])).toEqual([
      ['sms', null],
      ['email', null],
    ])
    expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' })).json.verified).toBe(true)
  })

  test('the retention sweep takes the steps with their verification', async () => {
    const h = await start()
    await h.send({ recipient: PHONE, workflow: [{ channel: 'sms' }, { channel: 'voice' }] })
    // The delivery's outcome is written after the answer; PostgreSQL's sweep skips a row a write holds.
    await h.server.storage.settled()
    h.clock.advance(40 * 86_400_000)
    const swept = await h.server.sweep()
    expect(swept.verifications).toBe(1)
    expect(swept.steps).toBe(2)
    expect(await stepRows(h)).toBe(0)
  })
})
