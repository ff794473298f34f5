/**
 * Every list of the console in a real browser (docs/console.md#lists), at a
 * laptop's width (1280 px) and a phone's (390 px): every column of every table
 * is seen or reachable by scrolling inside its card, never off the page; the
 * columns of the main lists fit at 1280 px; each list that grows
 * (verifications, webhook deliveries and endpoints, keys, accounts, the
 * credit ledger, the audit log) pages through more than one page; axe finds no serious or critical violation; and the small
 * truths: the default account's creation, "no receipts", one time format, a
 * 24-hour chart axis, a favicon, ZZ and the range labels explained.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { LISTEN_OPTIONS } from '../../src/http/app.ts'
import { createHarness, type Harness } from '../kit/harness.ts'
import { NUMBERS } from '../kit/console.ts'
import { expectAccessible, hiddenColumns, LAPTOP, launchBrowser, PHONE, scrolledColumns, screenshots, type TestBrowser } from './browser.ts'

setDefaultTimeout(60_000)

const PASSWORD = 'correct horse battery staple'
/** More than one page of each list (50 rows a page). */
const ROWS = 61

let h: Harness
let b: TestBrowser
let page: Page
let admin: string

beforeAll(async () => {
  h = await createHarness({
    credits: 100_000,
    config: {
      server: { admin_listen: '127.0.0.1:0' },
      limits: { key_requests_per_minute: 1_000_000, recipient_per_minute: 1000, recipient_per_hour: 1000, recipient_per_day: 1000 },
      fraud: { mode: 'off' },
    },
  })
  h.server.adminHttp.listen({ hostname: '127.0.0.1', port: 0, ...LISTEN_OPTIONS })
  admin = `http://127.0.0.1:${h.server.adminHttp.server!.port}`
  // An endpoint no dispatcher serves here: each send's event waits as a pending delivery, with a long id and an error-free row.
  await h.server.webhooks.add({ url: 'https://hooks.example.com/a/rather/long/path/for/the/otpd/events/endpoint' })
  for (let i = 0; i < ROWS; i++) expect((await h.send({ channel: 'sms', recipient: NUMBERS.US(i) })).status).toBe(200)
  const ops = h.server.admin.as({ operator: 'billing', source: 'cli' })
  for (let i = 0; i < ROWS; i++) await ops.addCredits(1, 'default', `grant number ${i} with a note long enough to wrap inside its cell`)
  // Keys, accounts and endpoints past one page too (the endpoints after the sends: their events go to the first one only).
  for (let i = 0; i < ROWS; i++) {
    await h.server.admin.createAccount(`acct-${String(i).padStart(2, '0')}`)
    await h.server.admin.createKey({ name: `key ${i}` })
    await h.server.webhooks.add({ url: `https://hooks.example.com/${i}` })
  }
  await h.server.storage.settled()
  await h.server.rollup.catchUp()
  await h.server.operators.add('alice', PASSWORD)
  b = await launchBrowser()
  page = b.page
  await page.goto(`${admin}/console/`)
  await page.waitForSelector('#signin-name')
  await page.type('#signin-name', 'alice')
  await page.type('#signin-password', PASSWORD)
  await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')])
})

afterAll(async () => {
  await b?.close()
  h?.close()
})

const rowsOf = (sel: string) =>
  page.$$eval(`${sel} tbody tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').replace(/\s+/g, ' ').trim())))

const PAGES = [
  '/console/',
  '/console/verifications',
  '/console/workflows',
  '/console/fraud',
  '/console/keys',
  '/console/webhooks',
  '/console/system',
  '/console/audit',
]

describe('every table fits its card', () => {
  for (const [size, viewport] of [
    ['1280', LAPTOP],
    ['390', PHONE],
  ] as const) {
    test(`at ${size} px: every column seen or reachable inside its card, nothing off the page, no serious axe violation`, async () => {
      await page.setViewport(viewport)
      const id = (await h.sql('SELECT id FROM verifications ORDER BY seq DESC LIMIT 1'))[0]!.id as string
      for (const path of [...PAGES, `/console/verifications/${id}`]) {
        await page.goto(admin + path)
        expect({ path, hidden: await hiddenColumns(page) }).toEqual({ path, hidden: [] })
        await expectAccessible(page, `${path} at ${size}`)
      }
      await page.setViewport(LAPTOP)
    })
  }

  test('at 1280 px the main lists need no scrolling: Status, Attempts, Next attempt, Last error and Replay are in view', async () => {
    await page.setViewport(LAPTOP)
    for (const path of ['/console/verifications', '/console/webhooks', '/console/keys', '/console/audit']) {
      await page.goto(admin + path)
      await screenshots(page, `lists-${path.split('/').pop()}`)
      expect({ path, scrolled: await scrolledColumns(page) }).toEqual({ path, scrolled: [] })
    }
  })
})

describe('every growing list pages', () => {
  /** Follows the list's Next links to the end: every row once, more than one page, a way back to the first. */
  async function pageThrough(path: string, table: string, key: (row: string[]) => string): Promise<string[]> {
    await page.goto(admin + path)
    const seen: string[] = []
    for (let pages = 1; ; pages++) {
      const rows = await rowsOf(table)
      expect(rows.length).toBeLessThanOrEqual(50)
      seen.push(...rows.map(key))
      const next = await page.$eval(`${table} ~ nav.pager a[rel=next]`, (a) => (a as any).getAttribute('href')).catch(() => null)
      if (next === null) {
        expect(pages).toBeGreaterThan(1)
        expect(await page.$$eval(`${table} ~ nav.pager > *`, (ns) => ns.map((n) => (n.textContent ?? '').trim()))).toEqual(['← First page', 'Last page'])
        return seen
      }
      await page.goto(admin + next)
    }
  }

  test('verifications: every one of them once, through its JSON next cursor', async () => {
    const ids = await pageThrough('/console/verifications', '#results', (r) => r[0]!)
    expect(ids).toHaveLength(ROWS)
    expect(new Set(ids).size).toBe(ROWS)
  })

  test('webhook deliveries', async () => {
    const events = await pageThrough('/console/webhooks', '#events', (r) => r[1]!)
    expect(new Set(events).size).toBe(ROWS)
  })

  test("the keys page's credit ledger", async () => {
    const notes = await pageThrough('/console/keys?account=default', '#ledger', (r) => r[4]!)
    for (let i = 0; i < ROWS; i++) expect(notes).toContain(`grant number ${i} with a note long enough to wrap inside its cell`)
  })

  test('keys, accounts and webhook endpoints', async () => {
    const keys = await pageThrough('/console/keys', '#keys', (r) => r[0]!)
    expect(new Set(keys).size).toBe(ROWS + 1)
    const accounts = await pageThrough('/console/keys', '#accounts', (r) => r[0]!)
    expect(accounts).toHaveLength(ROWS + 1)
    expect(accounts[0]).toBe('default')
    const endpoints = await pageThrough('/console/webhooks', '#endpoints', (r) => r[0]!)
    expect(new Set(endpoints).size).toBe(ROWS + 1)
  })

  test('the audit log', async () => {
    const rows = await pageThrough('/console/audit', '#audit', (r) => r.join('|'))
    expect(rows.filter((r) => r.includes('credits.added'))).toHaveLength(ROWS)
  })
})

describe('small truths', () => {
  test('the default account was created at install; one time format; ZZ and the range explained; a favicon', async () => {
    await page.goto(`${admin}/console/keys`)
    const accounts = await rowsOf('#accounts')
    expect(accounts.find((r) => r[0] === 'default')![3]).toBe('at install')
    const times = await page.$$eval('time', (ts) => ts.map((t) => t.textContent ?? ''))
    expect(times.length).toBeGreaterThan(0)
    for (const t of times) expect(t).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)
    expect(await page.$eval('.period-note', (p) => p.textContent)).toBe('Showing the last 24 hours up to now (times in UTC).')
    expect(await page.$$eval('.periods a', (as) => as.map((a) => a.getAttribute('title')))).toEqual([
      'the last hour up to now',
      'the last 24 hours up to now',
      'the last 7 days up to now',
      'the last 30 days up to now',
    ])
    const icon = await page.$eval('link[rel=icon]', (l) => (l as any).href as string)
    const res = await fetch(icon)
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/svg+xml'])
    expect(await res.text()).toStartWith('<svg')

    await page.goto(`${admin}/console/fraud`)
    expect(await page.content()).toContain('ZZ: a number of no known country')
  })

  test("the overview says 'no receipts' where no provider sent one, and its chart's axis is a 24-hour clock", async () => {
    await page.goto(`${admin}/console/?period=24h`)
    const providers = await rowsOf('#by-provider')
    expect(providers.length).toBeGreaterThan(0)
    for (const p of providers) expect(p[5]).toBe('no receipts')
    expect((await rowsOf('#by-provider')).flat().join(' ')).not.toContain('0.0 %')
    expect(await page.$eval('[data-figure=delivered]', (d) => d.textContent)).toBe('no receipts')
    await page.waitForSelector('.chart .uplot canvas')
    // The time under the pointer, in the legend: the console's format on a 24-hour clock (the axis uses the same clock).
    const over = (await page.$('.chart .u-over'))!
    const box = (await over.boundingBox())!
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
    const when = await page.$eval('.chart .u-legend .u-series:first-child .u-value', (v) => v.textContent ?? '')
    expect(when).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/)
    expect(await page.$eval('.chart .u-legend .u-series:first-child .u-label', (v) => v.textContent)).toBe('Time (UTC)')
    expect(await page.content()).toContain('ZZ: a number of no known country')
  })

  // Last: it moves the clock.
  test('a rotated key says until when it works, then that it has expired', async () => {
    const old = (await h.server.admin.listKeys())[0]!
    await h.server.admin.rotateKey(String(old.id), 60_000)
    await page.goto(`${admin}/console/keys`)
    const row = (await rowsOf('#keys')).find((r) => r[0] === old.prefix)!
    expect(row[3]).toMatch(/^rotated, works until \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)
    h.clock.advance(60_000)
    await page.goto(`${admin}/console/keys`)
    expect((await rowsOf('#keys')).find((r) => r[0] === old.prefix)![3]).toBe('expired')
  })
})
