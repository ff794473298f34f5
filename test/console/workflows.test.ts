/**
 * The console's workflows page (docs/console.md#workflows) in a real browser,
 * signed in as a viewer (it reads only): workflow sends made through the API,
 * some approved at a later step, shown by country and by channel with the
 * share fallback saved and its definition; at a laptop's width (1280 px) and
 * a phone's (390 px) every column is seen or reachable inside its card and
 * axe finds no serious or critical violation; an account without workflow
 * sends gets one clear sentence.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { FALLBACK_SAVED_MEANS } from '../../src/console/ui/pages/workflows.tsx'
import { LISTEN_OPTIONS } from '../../src/http/app.ts'
import { createHarness, type Harness, ChannelDelivery } from '../kit/harness.ts'
import { expectAccessible, hiddenColumns, LAPTOP, launchBrowser, PHONE, screenshots, type TestBrowser } from './browser.ts'

// A real browser, page loads and argon2 hashes on 2 shared cores.
setDefaultTimeout(60_000)

const VIEWER = 'ops-viewer'
const PASSWORD = 'a viewer password'
const WS = [{ channel: 'whatsapp' }, { channel: 'sms' }, { channel: 'voice' }]

let h: Harness
let b: TestBrowser
let page: Page
let admin: string

/** A workflow send and the code its steps share. */
async function send(delivery: ChannelDelivery, recipient: string, workflow: unknown[] = WS): Promise<{ id: string; code: string }> {
  const r = await h.send({ recipient, workflow })
  expect(r.status).toBe(200)
  await h.server.storage.settled()
  return { id: r.json.verification_id, code: delivery.sent.at(-1)!.code }
}

const approve = async (v: { id: string; code: string }) => expect((await h.verify({ verification_id: v.id, code: v.code })).json.verified).toBe(true)

/**
 * India: 4 workflow sends, approved at steps 1, 2 (WhatsApp refused) and 3
 * (after two timeouts), one never; Britain: 2, one approved at step 1, one not.
 */
beforeAll(async () => {
  const delivery = new ChannelDelivery()
  h = await createHarness({
    credits: 1000,
    delivery,
    config: {
      server: { admin_listen: '127.0.0.1:0' },
      limits: { recipient_per_minute: 100, recipient_per_hour: 100 },
      fraud: { mode: 'off' },
    },
  })
  h.server.adminHttp.listen({ hostname: '127.0.0.1', port: 0, ...LISTEN_OPTIONS })
  admin = `http://127.0.0.1:${h.server.adminHttp.server!.port}`
  await approve(await send(delivery, '+919812345000'))
  delivery.failing.add('whatsapp')
  await approve(await send(delivery, '+919812345001'))
  delivery.failing.delete('whatsapp')
  const late = await send(delivery, '+919812345002')
  await send(delivery, '+919812345003')
  for (let i = 0; i < 2; i++) {
    h.clock.advance(60_000)
    expect(await h.server.advanceDue()).toBe(2)
  }
  await h.server.storage.settled()
  await approve(late)
  await approve(await send(delivery, '+447400121001', [{ channel: 'sms' }, { channel: 'voice' }]))
  await send(delivery, '+447400121002', [{ channel: 'sms' }, { channel: 'voice' }])
  await h.server.admin.createAccount('quiet')
  await h.server.operators.add(VIEWER, PASSWORD, 'viewer')
  b = await launchBrowser()
  page = b.page
  await page.goto(`${admin}/console/`)
  await page.waitForSelector('#signin-name')
  await page.type('#signin-name', VIEWER)
  await page.type('#signin-password', PASSWORD)
  await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')])
})

afterAll(async () => {
  await b?.close()
  h?.close()
})

const text = (sel: string) => page.$eval(sel, (e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim())
/** Each row's cells as read, a meter's fallback text left out (the figure beside it says the same). */
const rowsOf = (sel: string) =>
  page.$$eval(`${sel} tbody tr`, (trs) =>
    trs.map((tr) =>
      [...tr.querySelectorAll('td')].map((td) => {
        const cell = td.cloneNode(true) as any
        for (const m of cell.querySelectorAll('meter')) m.remove()
        return (cell.textContent ?? '').replace(/\s+/g, ' ').trim()
      }),
    ),
  )

describe('the workflows page', () => {
  for (const [size, viewport] of [
    ['1280', LAPTOP],
    ['390', PHONE],
  ] as const) {
    test(`at ${size} px, as a viewer: the figures, by country and by channel, every column reachable, no serious axe violation`, async () => {
      await page.setViewport(viewport)
      const res = await page.goto(`${admin}/console/workflows?period=24h`)
      expect(res?.status()).toBe(200)
      expect(await text('nav.nav-side a[aria-current=page], nav.nav-menu a[aria-current=page]')).toBe('Workflows')
      expect(await text('#fallback-saved-means')).toBe(FALLBACK_SAVED_MEANS)
      // 6 sends, 4 approved: 2 at step 1, 1 at step 2, 1 at step 3; fallback saved 2 of 4.
      expect(await text('[data-figure=started]')).toBe('6')
      expect(await text('[data-figure=approved]')).toBe('4')
      expect([await text('[data-figure=step-1]'), await text('[data-figure=step-2]'), await text('[data-figure=step-3]')]).toEqual(['2', '1', '1'])
      expect(await text('[data-figure=fallback-saved]')).toBe('50.0 %')
      // Country, started, at step 1, 2, 3, approved, fallback saved.
      expect(await rowsOf('#wf-country')).toEqual([
        ['IN', '4', '1', '1', '1', '3', '66.7 %'],
        ['GB', '2', '1', '0', '0', '1', '0.0 %'],
      ])
      // Channel, steps started, at step 1, 2, 3, approved.
      expect(await rowsOf('#wf-channel')).toEqual([
        ['sms', '5', '1', '1', '0', '2'],
        ['whatsapp', '4', '1', '0', '0', '1'],
        ['voice', '2', '0', '0', '1', '1'],
      ])
      expect(await hiddenColumns(page)).toEqual([])
      await expectAccessible(page, `/console/workflows at ${size}`)
      await page.setViewport(LAPTOP)
      if (size === '1280') await screenshots(page, 'workflows')
    })
  }

  test('an account without workflow sends: one clear sentence, no table; still accessible', async () => {
    await page.goto(`${admin}/console/workflows?account=quiet&period=7d`)
    expect(await text('#workflows-empty')).toBe(
      'No workflow was sent in this period: sends with a workflow or "channel": "auto" (several channels for one code) are counted here.',
    )
    expect(await page.$$('main table')).toHaveLength(0)
    await expectAccessible(page, '/console/workflows (empty)')
  })
})
