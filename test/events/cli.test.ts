/**
 * Events through the real `otpd` binary: `otpd webhooks ...` and `otpd events
 * ...`, and a real `otpd serve` killed with SIGKILL between the change and the
 * delivery, whose event still arrives after the restart.
 */
import { expect, test } from 'bun:test'
import { cliEnv, post, startServer } from '../kit/cli.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import { harnessPerTest, MINUTE, TEST, UUID_V4 } from '../kit/harness.ts'
import { deliverEvents } from '../kit/events.ts'
import { holds } from '../kit/wait-for.ts'
import { receiverPerTest, signatureValid } from '../kit/webhook-receiver.ts'

const start = harnessPerTest()
const receiver = receiverPerTest()

test('kill -9 of otpd serve between the change and the delivery loses no event: it arrives after the restart, same webhook-id', async () => {
  const env = await cliEnv()
  const rx = receiver()
  const { key } = env.json('keys', 'create')
  const { secret } = env.json('webhooks', 'add', '--url', rx.url)
  let release!: () => void
  rx.hold = new Promise((r) => (release = r))
  const first = await startServer(env)
  const sent = await post(first.url, '/api/v1/send', key, { channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(sent.status).toBe(200)
  // The loop took the event and POSTed it; the answer never comes: SIGKILL now.
  const attempt = await rx.arrival(1)
  first.proc.kill('SIGKILL')
  await first.proc.exited
  release()
  rx.hold = null
  expect(env.json('events', 'list').map((e: { status: string }) => e.status)).toEqual(['pending'])

  await startServer(env)
  const again = await rx.arrival(2)
  expect(again.id).toBe(attempt.id)
  expect(again.body).toBe(attempt.body)
  expect(again.json.data.verification_id).toBe(sent.json.verification_id)
  expect(await signatureValid(secret, again, again.signatures[0]!)).toBe(true)
  // The listing that shows it delivered is the one asserted on: no further run.
  let events: { id: string; status: string }[] = []
  await holds(
    () => {
      events = env.json('events', 'list')
      return events[0]?.status === 'delivered'
    },
    { ms: 20_000, every: 100 },
  )
  expect(events.map((e) => [e.id, e.status])).toEqual([[attempt.id, 'delivered']])
}, 60_000)

test('otpd webhooks: add prints the secret once, list never shows it, rotate-secret, remove; clear errors', async () => {
  const env = await cliEnv()
  const added = env.run('webhooks', 'add', '--url', 'https://example.com/otpd-events', '--events', 'verification.approved,verification.locked')
  expect(added.code).toBe(0)
  const secret = added.stdout.split('\n')[0]!
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
  expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
  expect(added.stdout).toContain(
    "Added webhook endpoint 1 for account 'default': https://example.com/otpd-events (verification.approved, verification.locked).",
  )
  const list = env.run('webhooks', 'list')
  expect(list.stdout.split('\n')[0]).toMatch(/^ID {2}ACCOUNT {2}URL +EVENTS +CREATED +ROTATED$/)
  expect(list.stdout).toContain('verification.approved,verification.locked')
  const listJson = env.run('webhooks', 'list', '--json').stdout
  expect(list.stdout + listJson).not.toContain(secret.slice(6))
  expect(JSON.parse(listJson)).toEqual([
    {
      id: 1,
      account: 'default',
      url: 'https://example.com/otpd-events',
      events: ['verification.approved', 'verification.locked'],
      created_at: expect.any(String),
      rotated_at: null,
    },
  ])
  const rotated = env.json('webhooks', 'rotate-secret', '1')
  expect(rotated.secret).toMatch(/^whsec_/)
  expect(rotated.secret).not.toBe(secret)
  expect(env.json('webhooks', 'list')[0].rotated_at).toBe(rotated.rotated_at)
  expect(env.run('webhooks', 'remove', '1').stdout).toBe('removed webhook endpoint 1 (https://example.com/otpd-events)\n')
  expect(env.json('webhooks', 'list')).toEqual([])

  const errors: [string[], string][] = [
    [
      ['webhooks', 'add', '--url', 'example.com/x'],
      "otpd: error: webhook URL 'example.com/x' is not a valid absolute URL (example: https://example.com/otpd-events)\n",
    ],
    [['webhooks', 'add', '--url', 'ftp://example.com/x'], "otpd: error: webhook URL 'ftp://example.com/x' must start with https:// or http://\n"],
    [
      ['webhooks', 'add', '--url', 'https://u:p@example.com/'],
      "otpd: error: webhook URL 'https://u:p@example.com/' must not carry a user name or password: the signature authenticates otpd\n",
    ],
    [
      ['webhooks', 'add', '--url', 'https://example.com/x', '--events', 'verification.nope'],
      "otpd: error: unknown event type 'verification.nope'; known types: verification.sent, verification.delivered, verification.undelivered, verification.delivery_failed, verification.approved, verification.attempt_failed, verification.locked, verification.expired, verification.canceled, verification.fallback, send.blocked\n",
    ],
    [
      ['webhooks', 'add', '--url', 'https://example.com/x', '--account', 'acme'],
      "otpd: error: account 'acme' does not exist (create it with: otpd accounts create acme)\n",
    ],
    [['webhooks', 'remove', '7'], "otpd: error: no webhook endpoint has id '7' (see: otpd webhooks list)\n"],
    [['webhooks', 'rotate-secret', 'x'], "otpd: error: no webhook endpoint has id 'x' (see: otpd webhooks list)\n"],
    [['events', 'list', '--status', 'done'], "otpd: error: --status must be one of pending, failed, delivered, got 'done'\n"],
    [['events', 'replay'], 'otpd: error: give either an event id or --failed (see: otpd events list)\n'],
    [['events', 'replay', 'nope'], "otpd: error: no event has id 'nope' (see: otpd events list)\n"],
  ]
  // Each refuses before it writes anything: they run side by side.
  const runs = await Promise.all(errors.map(([args]) => env.runAsync(...args)))
  expect(runs.map((r) => [r.code, r.stderr])).toEqual(errors.map(([, stderr]) => [1, stderr]))
}, 60_000)

test('otpd events list filters by account and status; replay keeps the id', async () => {
  const env = await cliEnv()
  expect(env.run('accounts', 'create', 'acme').code).toBe(0)
  // The CLI runs on the real clock: the harness's starts there too.
  const h = await start({ dir: env.dir, databaseUrl: env.databaseUrl, clock: new ManualClock(Date.now()) })
  const rx = receiver()
  await h.server.webhooks.add({ url: rx.url })
  const acmeKey = (await h.server.admin.createKey({ name: 'acme', account: 'acme' })).key
  rx.statuses.push(500)
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, acmeKey)
  await h.server.events.deliverDue()
  // default: one pending (its try failed), one delivered; acme: no endpoint.
  const all = env.json('events', 'list')
  expect(all.map((e: Record<string, unknown>) => [e.account, e.type, e.status, e.attempts])).toEqual([
    ['default', 'verification.sent', 'pending', 1],
    ['default', 'verification.sent', 'delivered', 1],
    ['acme', 'verification.sent', 'none', 0],
  ])
  expect(all[0]).toMatchObject({ sequence: 1, endpoints: 1, last_error: 'HTTP 500' })
  expect(all[0].id).toMatch(UUID_V4)
  const ids = (args: string[]) => env.json('events', 'list', ...args).map((e: { id: string }) => e.id)
  const filters: [string[], string[]][] = [
    [['--status', 'pending'], [all[0].id]],
    [['--status', 'delivered'], [all[1].id]],
    [['--status', 'failed'], []],
    [['--account', 'acme'], [all[2].id]],
    [['--account', 'default', '--status', 'delivered'], [all[1].id]],
  ]
  // Each only reads: they run side by side.
  const listed = await Promise.all(filters.map(([args]) => env.runAsync('events', 'list', ...args, '--json')))
  expect(listed.map((r) => JSON.parse(r.stdout).map((e: { id: string }) => e.id))).toEqual(filters.map(([, want]) => want))
  const table = env.run('events', 'list', '--account', 'acme')
  expect(table.stdout.split('\n')[0]).toMatch(/^ID +TYPE +ACCOUNT +VERIFICATION +SEQ +OCCURRED +STATUS +ATTEMPTS +LAST ERROR$/)
  expect(table.stdout).toContain(all[2].id)

  const replay = env.run('events', 'replay', all[1].id)
  expect(replay.stdout).toBe(`event ${all[1].id} (verification.sent) will be sent again to 1 endpoint by the running server\n`)
  expect(ids(['--status', 'pending'])).toEqual([all[0].id, all[1].id])
  h.clock.advance(60_000)
  await h.server.events.deliverDue()
  expect(rx.received.map((r) => r.id).sort()).toEqual([all[0].id, all[1].id, all[0].id, all[1].id].sort())
  const resent = rx.received.filter((r) => r.id === all[1].id)
  expect(resent[1]!.body).toBe(resent[0]!.body)
  expect(ids(['--status', 'delivered'])).toEqual([all[0].id, all[1].id])
  expect(env.run('events', 'replay', all[2].id).stdout).toBe(`event ${all[2].id} (verification.sent) has no endpoint subscribed to it now: nothing to send\n`)
}, 60_000)

test('`otpd events replay --failed` puts every failed delivery back, with its event id', async () => {
  const env = await cliEnv()
  const h = await start({ dir: env.dir, databaseUrl: env.databaseUrl, clock: new ManualClock(Date.now()) })
  const rx = receiver()
  rx.statuses.push(...Array(200).fill(500))
  await h.server.webhooks.add({ url: rx.url })
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  for (let i = 0; i < 400 && (await h.server.webhooks.events({}))[0]!.status === 'pending'; i++) {
    await deliverEvents(h)
    h.clock.advance(5 * MINUTE)
  }
  const [failed] = await h.server.webhooks.events({})
  expect(failed!.status).toBe('failed')
  const r = env.run('events', 'replay', '--failed')
  expect([r.code, r.stdout]).toEqual([0, '1 failed delivery of 1 event will be sent again by the running server\n'])
  expect(env.json('events', 'list', '--status', 'pending').map((e: { id: string }) => e.id)).toEqual([failed!.id])
  rx.statuses.length = 0
  h.clock.advance(MINUTE)
  await deliverEvents(h)
  expect(rx.received.at(-1)!.id).toBe(failed!.id)
  expect((await h.server.webhooks.events({}))[0]!.status).toBe('delivered')
}, 60_000)

test('otpd events list --type: only that type; send.blocked shows the rule, country and masked recipient; a wrong type names the nearest', async () => {
  const env = await cliEnv()
  // The events are made in-process on the CLI's database (the fraud guard at its defaults, as `otpd serve` has it);
  // only what is under test runs as `otpd`.
  const h = await start({ dir: env.dir, databaseUrl: env.databaseUrl, clock: new ManualClock(Date.now()), credits: 10, config: { fraud: {} } })
  await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: '+998901230001' })).status).toBe(403)
  expect((await h.server.webhooks.events({})).map((e) => e.type)).toEqual(['verification.sent', 'send.blocked'])
  // Each only reads: they run side by side.
  const [blockedJson, sentJson, table, none, wrong, help] = await Promise.all(
    [
      ['--type', 'send.blocked', '--json'],
      ['--type', 'verification.sent', '--json'],
      ['--type', 'send.blocked'],
      ['--type', 'verification.approved'],
      ['--type', 'send.blokced'],
      ['--help'],
    ].map((args) => env.runAsync('events', 'list', ...args)),
  )
  const blocked = JSON.parse(blockedJson!.stdout)
  expect(blocked).toHaveLength(1)
  expect(blocked[0]).toMatchObject({ type: 'send.blocked', verification_id: null })
  expect(blocked[0].blocked).toEqual({ rule: 'geo', country: 'UZ', channel: 'sms', recipient: expect.stringMatching(/^\+9989\d*\*+\d+$/) })
  expect(blocked[0].blocked.recipient).not.toContain('901230001')
  expect(JSON.parse(sentJson!.stdout).map((e: { blocked: unknown }) => e.blocked)).toEqual([null])
  expect(table!.stdout.split('\n')[0]).toContain('DETAIL')
  expect(table!.stdout).toContain(`rule geo UZ ${blocked[0].blocked.recipient}`)
  expect(table!.stdout).not.toContain('verification.sent')
  expect(none!.stdout).toStartWith('none verification.approved')
  expect(wrong!.code).toBe(1)
  expect(wrong!.stderr).toContain('--type must be one of verification.sent,')
  expect(wrong!.stderr).toContain("got 'send.blokced' (did you mean send.blocked?)")
  expect(help!.stdout).toContain('--type <type>')
}, 30_000)
