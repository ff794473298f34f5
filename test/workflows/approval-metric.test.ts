/**
 * `otpd_workflow_approvals_total` (docs/operating.md#metrics): each approved
 * workflow verification counted once, by the step current at approval (its
 * index, 0 the send's own, and its channel), on the engine of the run; a
 * plain send's approval, a wrong code, a replayed verify and a test
 * recipient's approval count nothing.
 */
import { describe, expect, test } from 'bun:test'
import { harnessPerTest, type Harness, ChannelDelivery, TEST } from '../kit/harness.ts'

const start = harnessPerTest({ credits: 10 })
const PHONE = '+919812345678'
const THREE = { recipient: PHONE, workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }, { channel: 'voice' }] }

/** The counter's series as "labels value" lines. */
async function approvals(h: Harness): Promise<string[]> {
  const text = await h.server.metrics.render()
  return text.split('\n').filter((l) => l.startsWith('otpd_workflow_approvals_total{'))
}

async function channelHarness(): Promise<{ h: Harness; delivery: ChannelDelivery }> {
  const delivery = new ChannelDelivery()
  return { h: await start({ delivery }), delivery }
}

describe('an approved workflow verification is counted at the step current then', () => {
  test('at the first step: step 0 and its channel', async () => {
    const { h, delivery } = await channelHarness()
    const r = await h.send(THREE)
    await h.server.storage.settled()
    expect((await h.verify({ verification_id: r.json.verification_id, code: delivery.lastCode() })).json.verified).toBe(true)
    expect(await approvals(h)).toEqual(['otpd_workflow_approvals_total{step="0",channel="whatsapp"} 1'])
  })

  test('after a failed delivery moved it on: step 1, sms; another approved after channel_timeout moved it on again: step 2, voice', async () => {
    const { h, delivery } = await channelHarness()
    delivery.failing.add('whatsapp')
    const a = await h.send(THREE)
    await h.server.storage.settled()
    expect((await h.verify({ verification_id: a.json.verification_id, code: delivery.lastCode() })).json.verified).toBe(true)
    expect(await approvals(h)).toEqual(['otpd_workflow_approvals_total{step="1",channel="sms"} 1'])

    const b = await h.send({ ...THREE, recipient: '+919812345679' })
    await h.server.storage.settled()
    // The same code at every step (a voice call speaks it).
    const code = delivery.lastCode()
    h.clock.advance(60_000)
    expect(await h.server.advanceDue()).toBe(1)
    expect(delivery.sent.at(-1)!.channel).toBe('voice')
    expect((await h.verify({ verification_id: b.json.verification_id, code })).json.verified).toBe(true)
    expect(await approvals(h)).toEqual(['otpd_workflow_approvals_total{step="1",channel="sms"} 1', 'otpd_workflow_approvals_total{step="2",channel="voice"} 1'])
  })
})

describe('what counts nothing', () => {
  test("a plain send's approval, a wrong code, a replayed verify", async () => {
    const { h, delivery } = await channelHarness()
    const plain = await h.send({ channel: 'sms', recipient: PHONE })
    expect((await h.verify({ verification_id: plain.json.verification_id, code: delivery.lastCode() })).json.verified).toBe(true)
    const r = await h.send({ ...THREE, recipient: '+919812345679' })
    await h.server.storage.settled()
    const code = delivery.lastCode()
    expect((await h.verify({ verification_id: r.json.verification_id, code: code === '000000' ? '111111' : '000000' })).json.verified).toBe(false)
    expect(await approvals(h)).toEqual([])
    const body = { verification_id: r.json.verification_id, code }
    const headers = { 'idempotency-key': 'verify-1' }
    expect((await h.call('/api/v1/verify', body, { headers })).json.verified).toBe(true)
    const again = await h.call('/api/v1/verify', body, { headers })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await approvals(h)).toEqual(['otpd_workflow_approvals_total{step="0",channel="whatsapp"} 1'])
  })

  test("a test recipient's workflow, approved at its second step", async () => {
    const { h } = await channelHarness()
    const r = await h.send({ recipient: TEST.PHONE_SUCCESS, workflow: [{ channel: 'sms' }, { channel: 'voice' }] })
    h.clock.advance(60_000)
    expect(await h.server.advanceDue()).toBe(1)
    expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' })).json.verified).toBe(true)
    expect(await approvals(h)).toEqual([])
  })
})
