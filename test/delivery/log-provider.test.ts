/**
 * The `log` provider through `otpd serve` (docs/delivery.md#development-providers):
 * its line is a log line like every other, so the JSON-lines stdout stays
 * JSON lines, and it keeps the secrets rules of the log except for the code,
 * which is what it is for.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, post, startServer } from '../kit/cli.ts'
import { LOG_PROVIDER_MSG } from '../../src/delivery/log-provider.ts'

setDefaultTimeout(30_000)

const PHONE = '+14155550123'

test('serve writes the log provider line as one JSON line among the others, the recipient masked', async () => {
  const env = await cliEnv()
  const key = env.json('keys', 'create').key as string
  env.json('credits', 'add', '5')
  const server = await startServer(env)
  const sent = await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: PHONE })
  expect(sent.status).toBe(200)
  const deadline = Date.now() + 5_000
  while (!server.output().includes(LOG_PROVIDER_MSG) && Date.now() < deadline) await Bun.sleep(20)
  const lines = server.output().trim().split('\n')
  // Every stdout line is JSON: nothing plain is mixed into the stream a collector parses.
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  const delivery = parsed.filter((l) => l.msg === LOG_PROVIDER_MSG)
  expect(delivery).toHaveLength(1)
  expect(delivery[0]).toMatchObject({ level: 'info', provider: 'log', channel: 'sms', recipient: '+1415****123', verification_id: sent.json.verification_id })
  expect(delivery[0]!.text).toMatch(/^Your verification code is: [0-9]{6}$/)
  expect(server.output()).not.toContain(PHONE)
})
