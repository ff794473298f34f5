/**
 * Test codes do not outlive the switch (docs/api.md#test-recipients): with
 * test recipients off for an account, no test verification of that account
 * verifies, also one made before the switch; `on` again makes those still
 * unexpired usable. Other accounts are not touched.
 */
import { expect, test } from 'bun:test'
import { cliEnv, post, startServer } from '../kit/cli.ts'
import { expectError, harnessPerTest, TEST } from '../kit/harness.ts'

const start = harnessPerTest()
const NOT_FOUND = 'Verification not found'

test('the attack as the review ran it: a test verification made just before `accounts set --test-recipients off` (another process) no longer verifies: the known test code is refused, as for any other account', async () => {
  const env = await cliEnv()
  const key = env.json('keys', 'create').key as string
  const server = await startServer(env)
  const sent = await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(sent.status).toBe(200)
  expect(env.run('accounts', 'set', 'default', '--test-recipients', 'off').code).toBe(0)
  // Within 1 s the running server applies the change made by another process (docs/fraud-guard.md): a fixed
  // wait, since the one probe, a verify with the known code, would use the verification up.
  await Bun.sleep(1100)
  const r = await post(server.url, '/api/v1/verify', key, { verification_id: sent.json.verification_id, code: '123456' })
  expect([r.status, r.json.error]).toEqual([404, NOT_FOUND])
})

test('while off, no test verification of the account verifies (sms and email, made before the switch); on again: they do; another account is not touched', async () => {
  const h = await start({ credits: 10 })
  await h.server.admin.createAccount('acme')
  const other = (await h.server.admin.createKey({ name: 'other', account: 'acme' })).key
  const sms = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id
  const email = (await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS })).json.verification_id
  const theirs = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }, other)).json.verification_id
  await h.server.fraud.setAccount('default', { testRecipients: false })
  for (const id of [sms, email]) expectError(await h.verify({ verification_id: id, code: '123456' }), 404, NOT_FOUND)
  // Not a failed attempt: nothing counted, nothing locked.
  expect((await h.sql('SELECT failed_attempts FROM verifications ORDER BY seq')).map((r) => Number(r.failed_attempts))).toEqual([0, 0, 0])
  expect((await h.verify({ verification_id: theirs, code: '123456' }, other)).json.verified).toBe(true)
  await h.server.fraud.setAccount('default', { testRecipients: true })
  expect((await h.verify({ verification_id: sms, code: '123456' })).json.verified).toBe(true)
})
