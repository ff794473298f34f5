/**
 * The receiver example of docs/events.md, run as written against a real
 * delivery: the code block after `<!-- events-receiver-example -->` is written
 * to a file and imported, so the docs cannot drift from what otpd sends.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../src/lib/clock.ts'
import { newSecret } from '../../src/otp/webhooks.ts'
import { createHarness, TEST } from '../kit/harness.ts'
import { startReceiver } from '../kit/webhook-receiver.ts'

const dir = mkdtempSync(join(tmpdir(), 'otpd-events-example-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function docsVerifier(): Promise<(secret: string, headers: Headers, body: string) => boolean> {
  const page = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'events.md')).text()
  const m = /<!-- events-receiver-example -->\n```ts\n([\s\S]*?)\n```/.exec(page)
  if (!m) throw new Error('docs/events.md has no receiver example after <!-- events-receiver-example -->')
  const file = join(dir, 'receiver.ts')
  writeFileSync(file, m[1]!)
  return (await import(file)).verifyOtpdEvent
}

test('the receiver example of docs/events.md accepts a real delivery, also after a rotation, and refuses a tampered one', async () => {
  const verifyOtpdEvent = await docsVerifier()
  // The example checks the timestamp against the real time.
  const h = await createHarness({ clock: new ManualClock(Date.now()) })
  const rx = startReceiver()
  try {
    const { id, secret } = await h.server.webhooks.add({ url: rx.url })
    await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    await h.server.events.deliverDue()
    const r = rx.received[0]!
    expect(verifyOtpdEvent(secret, r.headers, r.body)).toBe(true)
    expect(verifyOtpdEvent(secret, r.headers, r.body.replace('"pending"', '"approved"'))).toBe(false)
    expect(verifyOtpdEvent(newSecret(), r.headers, r.body)).toBe(false)
    const stale = new Headers(r.headers)
    stale.set('webhook-timestamp', String(Number(r.timestamp) - 600))
    expect(verifyOtpdEvent(secret, stale, r.body)).toBe(false)

    // After a rotation both the old and the new secret verify.
    const { secret: fresh } = await h.server.webhooks.rotateSecret(String(id))
    await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    await h.server.events.deliverDue()
    const last = rx.received.at(-1)!
    expect(last.id).not.toBe(r.id)
    expect(last.signatures).toHaveLength(2)
    expect(verifyOtpdEvent(fresh, last.headers, last.body)).toBe(true)
    expect(verifyOtpdEvent(secret, last.headers, last.body)).toBe(true)
  } finally {
    rx.stop()
    h.close()
  }
})
