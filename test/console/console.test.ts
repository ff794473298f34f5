/**
 * The operator console in a real browser (docs/console.md): a real otpd
 * server (the test harness, its admin listener and its public listener on
 * loopback), Debian's headless Chromium, one browser for the file and one
 * signed-in page reused by the tests in order. Every page visited is checked
 * with axe-core and saved at a laptop's and a phone's size.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'puppeteer-core'
import { LISTEN_OPTIONS } from '../../src/http/app.ts'
import { approve, GRACE, PUMPING, sendAccepted, uz, uz2 } from '../kit/fraud.ts'
import { createHarness, DAY, type Harness } from '../kit/harness.ts'
import { type Receiver, startReceiver } from '../kit/webhook-receiver.ts'
import { expectAccessible, launchBrowser, screenshots, type TestBrowser } from './browser.ts'

// A real browser, page loads and argon2 hashes on 2 shared cores.
setDefaultTimeout(30_000)

const PASSWORD = 'correct horse battery staple'
const DOCS_SCREENSHOT = join(import.meta.dir, '../../docs/console-overview.png')

let h: Harness
let rx: Receiver
let b: TestBrowser
let page: Page
/** The admin listener (the console) and the public API listener. */
let admin: string
let api: string
/** A key of the account `shop`, whose figures the overview test checks. */
let shopKey: string

beforeAll(async () => {
  h = await createHarness({
    credits: 100_000,
    config: {
      // The console is on where the admin listener is (it is started below, on a free port).
      server: { admin_listen: '127.0.0.1:0' },
      limits: { key_requests_per_minute: 1_000_000, recipient_per_minute: 1000, recipient_per_hour: 1000, recipient_per_day: 1000 },
      fraud: { mode: 'enforce' },
    },
  })
  api = h.listen()
  h.server.adminHttp.listen({ hostname: '127.0.0.1', port: 0, ...LISTEN_OPTIONS })
  admin = `http://127.0.0.1:${h.server.adminHttp.server!.port}`
  rx = startReceiver()
  await h.server.webhooks.add({ url: rx.url })
  h.server.events.start()
  await h.server.admin.createAccount('shop')
  await h.server.admin.addCredits(100, 'shop')
  shopKey = (await h.server.admin.createKey({ name: 'shop backend', account: 'shop' })).key
  for (const name of ['alice', 'mallory', 'carol']) await h.server.operators.add(name, PASSWORD)
  b = await launchBrowser()
  page = b.page
  page.on('dialog', (d) => void d.accept())
})

afterAll(async () => {
  await b?.close()
  rx?.stop()
  h?.close()
})

/** Runs `act` (a click that submits through htmx) and waits for the swapped page to settle. */
async function settle(p: Page, act: () => Promise<unknown>): Promise<void> {
  const before = await p.evaluate(() => Number((globalThis as any).document.body.dataset.settled ?? 0))
  await act()
  await p.waitForFunction((n: number) => Number((globalThis as any).document.body.dataset.settled ?? 0) > n, {}, before)
}

/** Goes to a console page, checks it with axe and saves its screenshots. */
async function visit(path: string, name: string, p: Page = page): Promise<void> {
  await p.goto(admin + path)
  await expectAccessible(p, name)
  await screenshots(p, name)
}

const text = (sel: string, p: Page = page) => p.$eval(sel, (e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim())
const rowsOf = (sel: string, p: Page = page) =>
  p.$$eval(`${sel} tbody tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').replace(/\s+/g, ' ').trim())))

async function signIn(p: Page, name: string, password: string): Promise<void> {
  await p.goto(`${admin}/console/`)
  await p.waitForSelector('#signin-name')
  await p.type('#signin-name', name)
  await p.type('#signin-password', password)
  await Promise.all([p.waitForNavigation(), p.click('form button[type=submit]')])
}

async function incognito(): Promise<{ ctx: BrowserContext; p: Page }> {
  const ctx = await b.browser.createBrowserContext()
  const p = await ctx.newPage()
  await p.setViewport({ width: 1280, height: 800 })
  return { ctx, p }
}

describe('console in a browser', () => {
  test('sign-in: a wrong password is refused, then the limiter answers', async () => {
    const { ctx, p } = await incognito()
    await p.goto(`${admin}/console/`)
    expect(new URL(p.url()).pathname).toBe('/console/sign-in')
    await expectAccessible(p, 'sign-in')
    await screenshots(p, 'sign-in')
    const attempt = async (password: string) => {
      await p.goto(`${admin}/console/sign-in`)
      await p.type('#signin-name', 'mallory')
      await p.type('#signin-password', password)
      const [res] = await Promise.all([p.waitForNavigation(), p.click('form button[type=submit]')])
      return { status: res!.status(), alert: await text('[role=alert]', p) }
    }
    const first = await attempt('not the password at all')
    expect(first.status).toBe(401)
    expect(first.alert).toMatch(/invalid/i)
    let last = first
    for (let i = 0; i < 5 && last.status !== 429; i++) last = await attempt('still not the password')
    expect(last.status).toBe(429)
    expect(last.alert).toMatch(/too many/i)
    // Limited, even with the right password now.
    expect((await attempt(PASSWORD)).status).toBe(429)
    await ctx.close()

    await signIn(page, 'alice', PASSWORD)
    expect(new URL(page.url()).pathname).toBe('/console/')
    expect(await text('.who strong')).toBe('alice')
  })

  test("the overview's figures equal what was sent and verified through the API", async () => {
    // Three sends on the account shop (US, US, GB), two of them verified.
    const codes: { id: string; code: string }[] = []
    for (const to of ['+14155550101', '+14155550102', '+447400121001']) {
      const r = await h.send({ channel: 'sms', recipient: to }, shopKey)
      expect(r.status).toBe(200)
      codes.push({ id: r.json.verification_id, code: h.delivery.lastCode() })
    }
    for (const c of codes.slice(0, 2)) expect((await h.verify({ verification_id: c.id, code: c.code }, shopKey)).json.verified).toBe(true)

    // The figures are the rollups' (brought up to date in the background by `serve`).
    await h.server.rollup.catchUp()
    await visit('/console/?account=shop&period=24h', 'overview')
    // OTPD_UPDATE_DOCS_SCREENSHOT=1 makes this the picture docs/console.md shows.
    if (process.env.OTPD_UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(join(import.meta.dir, '.screenshots/overview-laptop.png'), DOCS_SCREENSHOT)
    expect(await text('[data-figure=sends]')).toBe('3')
    expect(await text('[data-figure=verified]')).toBe('2')
    expect(await text('[data-figure=conversion]')).toBe('66.7 %')
    // Country, sends, accepted, delivered, verified.
    const byCountry = Object.fromEntries((await rowsOf('#by-country')).map((r) => [r[0], [r[1], r[4]]]))
    expect(byCountry).toEqual({ US: ['2', '2'], GB: ['1', '0'] })
    const byChannel = await rowsOf('#by-channel')
    expect(byChannel.map((r) => [r[0], r[1], r[4]])).toEqual([['sms', '3', '2']])
    // uPlot drew the series (the console's script ran under the CSP).
    await page.waitForSelector('.chart .uplot canvas')
  })

  test('create a key, see it once, use it, disable it and see the API refuse it within 1 s', async () => {
    await visit('/console/keys', 'keys')
    await page.type('#key-name', 'made in the console')
    await settle(page, () => page.click('#create-key button[type=submit]'))
    const key = await text('[data-key]')
    expect(key.length).toBeGreaterThan(20)
    const send = () =>
      fetch(`${api}/api/v1/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'sms', recipient: '+15550100001' }),
      })
    expect((await send()).status).toBe(200)
    // Shown once: the keys page, loaded again, has only its prefix.
    await page.goto(`${admin}/console/keys`)
    expect(await page.$('[data-key]')).toBeNull()
    expect(await page.content()).not.toContain(key)

    const row = (await rowsOf('#keys')).find((r) => key.includes(r[0]!) && r[1] === 'made in the console')
    expect(row?.[3]).toBe('active')
    await settle(page, () => page.click(`button[aria-label^="Disable key ${row![0]}"]`))
    const disabledAt = Date.now()
    expect(await text('.flash')).toContain('disabled')
    let status = 0
    while (Date.now() - disabledAt < 1000 && (status = (await send()).status) !== 403) await Bun.sleep(50)
    expect(status).toBe(403)
  })

  test('add credits with a reason, and see them in the ledger and the audit log', async () => {
    await visit('/console/keys?account=shop', 'keys-shop')
    const before = (await h.server.admin.balance('shop')).balance
    await page.select('#credits-op', 'add')
    await page.type('#credits-amount', '250')
    await page.type('#credits-note', 'invoice 2026-117 paid')
    await settle(page, () => page.click('#credits-form button[type=submit]'))
    expect(await text('.flash')).toContain(`shop now has ${before + 250}`)
    expect((await h.server.admin.balance('shop')).balance).toBe(before + 250)
    const ledger = await rowsOf('#ledger')
    expect(ledger[0]?.slice(1, 3)).toEqual(['grant', '+250'])
    expect(ledger[0]?.[4]).toBe('invoice 2026-117 paid')

    await visit('/console/audit', 'audit')
    const entry = (await rowsOf('#audit')).find((r) => r[3] === 'credits.added')
    expect(entry?.[1]).toBe('alice')
    expect(entry?.[2]).toBe('console')
    expect(entry?.[5]).toContain('invoice 2026-117 paid')
  })

  test('a fraud block made through the API is seen with its evidence, unblocked, and the next send goes through', async () => {
    // UZ proven, then 20 unapproved sends to +99890123 past the grace: the next send starts a block.
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await sendAccepted(h, 20)
    h.clock.advance(GRACE)
    const refused = await h.send({ channel: 'sms', recipient: uz(500) })
    expect(refused.status).toBe(429)
    expect(refused.json.error).toBe(PUMPING(900))
    // A day passed on the server's clock: the session ended (12 h idle), so sign in again.
    await signIn(page, 'alice', PASSWORD)

    await visit('/console/fraud', 'fraud')
    const blocks = await rowsOf('#blocks')
    const block = blocks.find((r) => r[2] === 'prefix +99890123')
    expect(block?.[0]).toBe('default')
    expect(block?.[1]).toBe('conversion')
    expect(block?.slice(5, 7)).toEqual(['20', '0'])
    await settle(page, () => page.click('button[aria-label="Unblock prefix +99890123 of default"]'))
    expect(await text('.flash')).toContain('Unblocked prefix +99890123')
    // The country's block (started with the prefix's) is lifted too, then the next send goes through.
    const country = (await rowsOf('#blocks')).find((r) => r[2] === 'country UZ')
    if (country) await settle(page, () => page.click('button[aria-label="Unblock country UZ of default"]'))
    expect((await h.send({ channel: 'sms', recipient: uz(501) })).status).toBe(200)
  })

  test('replay an event to a loopback receiver', async () => {
    const sent = await h.send({ channel: 'sms', recipient: '+15550100001' })
    // This send's event: earlier tests' events may still arrive first, and be older than the page's newest 100.
    const first = await rx.arrivalOf((r) => r.json.data?.verification_id === sent.json.verification_id)
    expect(first.json.type).toBe('verification.sent')
    await visit('/console/webhooks', 'webhooks')
    await page.waitForSelector(`button[aria-label^="Replay event ${first.id} "]`)
    await settle(page, () => page.click(`button[aria-label^="Replay event ${first.id} "]`))
    expect(await text('.flash')).toContain(`Event ${first.id} queued again`)
    // Other events may still be on their way; the replayed one comes again, with the same id and body.
    const copies = () => rx.received.filter((r) => r.id === first.id)
    for (let i = 0; i < 100 && copies().length < 2; i++) await Bun.sleep(100)
    expect(copies().length).toBe(2)
    expect(copies()[1]!.body).toBe(first.body)
  })

  test("a verification's timeline", async () => {
    const r = await h.send({ channel: 'sms', recipient: '+14155550177' }, shopKey)
    const id = r.json.verification_id as string
    const code = h.delivery.lastCode()
    // The send's outcome (its `sent` event) is written after the answer: let it land before the attempts.
    await h.server.storage.settled()
    expect((await h.verify({ verification_id: id, code: code === '000000' ? '111111' : '000000' }, shopKey)).json.verified).toBe(false)
    expect((await h.verify({ verification_id: id, code }, shopKey)).json.verified).toBe(true)

    await visit(`/console/verifications?account=shop&period=24h&id=${id}`, 'verifications')
    const rows = await rowsOf('#results')
    expect(rows.map((x) => x[0])).toEqual([id])
    expect(rows[0]?.[4]).not.toContain('14155550177')
    await Promise.all([
      page.waitForFunction(() => (globalThis as any).location.pathname.includes('/verifications/')),
      page.click(`a[href="/console/verifications/${id}"]`),
    ])
    await page.waitForSelector('#timeline')
    await expectAccessible(page, 'verification')
    await screenshots(page, 'verification')
    const kinds = await page.$$eval('#timeline li', (lis) => lis.map((li) => li.getAttribute('data-kind')))
    expect(kinds[0]).toBe('created')
    expect(kinds).toContain('sent')
    expect(kinds.indexOf('attempt_failed')).toBeGreaterThan(kinds.indexOf('sent'))
    expect(kinds.at(-1)).toBe('approved')
    expect(await page.content()).not.toContain('14155550177')
    // The full number typed in finds it too (hashed, never shown), posted: it lands in no URL or history entry.
    await visit('/console/verifications?account=shop&period=24h', 'verifications-by-recipient')
    await page.type('#q-recipient', '+14155550177')
    await settle(page, () => page.click('form[aria-label="Search verifications"] button[type=submit]'))
    expect((await rowsOf('#results')).map((x) => x[0])).toContain(id)
    expect(page.url()).not.toContain('14155550177')
    expect(await page.content()).not.toContain('14155550177')
    await visit('/console/system', 'system')
    expect(await text('[data-fact=engine]')).toMatch(/sqlite|postgres/i)
    // Each provider's circuit on this node (docs/delivery.md#circuit-breaking): none here, the deliveries are recorded.
    expect(await rowsOf('#circuits')).toEqual([['No configured provider: deliveries go elsewhere.']])
  })

  test("the console's paths answer 404 on the public listener", async () => {
    for (const path of ['/console/', '/console/sign-in', '/console/api/overview?period=24h', '/console/api/session']) {
      expect((await fetch(api + path)).status).toBe(404)
    }
    expect((await fetch(`${api}/console/api/session`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(404)
  })

  test('a state-changing request without a CSRF token is refused', async () => {
    await page.goto(`${admin}/console/keys`)
    const keys = (await h.server.admin.listKeys()).length
    const statuses = await page.evaluate(async () => {
      const form = await fetch('/console/keys', { method: 'POST', body: new URLSearchParams({ name: 'forged' }) })
      const json = await fetch('/console/api/keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'forged' }),
      })
      const signOut = await fetch('/console/api/session', { method: 'DELETE' })
      return [form.status, json.status, signOut.status]
    })
    expect(statuses).toEqual([403, 403, 403])
    expect((await h.server.admin.listKeys()).length).toBe(keys)
    // The session was not ended by the refused sign-out.
    expect(await page.evaluate(async () => (await fetch('/console/api/session')).status)).toBe(200)
  })

  test('a session is refused after its operator is disabled', async () => {
    const { ctx, p } = await incognito()
    await signIn(p, 'carol', PASSWORD)
    expect(new URL(p.url()).pathname).toBe('/console/')
    expect(await p.evaluate(async () => (await fetch('/console/api/overview?period=24h')).status)).toBe(200)
    await h.server.operators.disable('carol')
    expect(await p.evaluate(async () => (await fetch('/console/api/overview?period=24h')).status)).toBe(401)
    await p.goto(`${admin}/console/`)
    expect(new URL(p.url()).pathname).toBe('/console/sign-in')
    await ctx.close()
  })
})
