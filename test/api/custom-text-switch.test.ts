/**
 * An account's custom texts switch (docs/messages.md#encoding-and-segments):
 * with it off, a key holder can no longer make otpd send a text of its own
 * under the operator's sender ID or From address: `message` or `subject` is a
 * 400, nothing delivered, charged or counted. On (the default) they work.
 */
import { expect, test } from 'bun:test'
import { expectError, harnessPerTest, TEST } from '../kit/harness.ts'

const start = harnessPerTest({ credits: 10 })
const REFUSED = 'This account does not accept a custom message or subject: send without them and the configured texts are used'

test('off: a send with its own message or subject is refused (a test recipient too), one without is sent with the configured text; on again: allowed', async () => {
  const h = await start()
  const phishing = { channel: 'sms', recipient: '+14155550123', message: 'Your bank account is locked, call +1 555 0100. Ref {code}' }
  expect((await h.send(phishing)).status).toBe(200)
  await h.server.admin.setMessaging('default', { customText: false })
  const sent = h.delivery.sent.length
  const balance = (await h.server.admin.balance()).balance
  expectError(await h.send(phishing), 400, REFUSED)
  expectError(await h.send({ channel: 'email', recipient: 'ada@example.com', subject: 'Urgent' }), 400, REFUSED)
  expectError(await h.send({ ...phishing, recipient: TEST.PHONE_SUCCESS }), 400, REFUSED)
  expect(h.delivery.sent.length).toBe(sent)
  expect((await h.server.admin.balance()).balance).toBe(balance)
  expect((await h.send({ channel: 'sms', recipient: '+14155550124' })).status).toBe(200)
  expect(h.delivery.sent.at(-1)!.text).toStartWith('Your verification code is: ')
  await h.server.admin.setMessaging('default', { customText: true })
  expect((await h.send({ ...phishing, recipient: '+14155550125' })).status).toBe(200)
})

test('another account keeps its own switch', async () => {
  const h = await start()
  await h.server.admin.createAccount('acme')
  await h.server.admin.setMessaging('acme', { customText: false })
  expect((await h.send({ channel: 'sms', recipient: '+14155550123', message: 'Code {code}' })).status).toBe(200)
})
