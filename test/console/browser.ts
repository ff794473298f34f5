/**
 * The browser of the console tests: Debian's Chromium (/usr/bin/chromium, or
 * OTPD_TEST_CHROMIUM), headless, driven by puppeteer-core over the DevTools
 * protocol, with a fresh profile in a temp dir. One browser per test file;
 * pages are reused. Beside it: axe-core run in the page (0 serious or critical
 * violations) and screenshots at a laptop's and a phone's size under
 * test/console/.screenshots/ (git-ignored).
 */
import { expect } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'

export const CHROMIUM = process.env.OTPD_TEST_CHROMIUM ?? '/usr/bin/chromium'
export const SCREENSHOTS = join(import.meta.dir, '.screenshots')
export const LAPTOP = { width: 1280, height: 800 }
export const PHONE = { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 1 }

export interface TestBrowser {
  browser: Browser
  page: Page
  close(): Promise<void>
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'otpd-chromium-'))
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    pipe: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  })
  const page = await browser.newPage()
  await page.setViewport(LAPTOP)
  page.setDefaultTimeout(10_000)
  return {
    browser,
    page,
    close: async () => {
      await browser.close().catch(() => undefined)
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

/** Runs axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a script tag would be refused).
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE)
  const violations = (await page.evaluate(async () => {
    const g = globalThis as any
    const r = await g.axe.run(g.document, { resultTypes: ['violations'] })
    return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 5) }))
  })) as { id: string; impact: string; help: string; nodes: string[] }[]
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  expect({ page: name, violations: bad }).toEqual({ page: name, violations: [] })
}

/** Saves the page at 1280x800 and at 390x844 as `<name>-laptop.png` and `<name>-phone.png`; the page is left at 1280x800. */
export async function screenshots(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const laptop = join(SCREENSHOTS, `${name}-laptop.png`)
  await page.setViewport(LAPTOP)
  await page.screenshot({ path: laptop })
  await page.setViewport(PHONE)
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-phone.png`) })
  await page.setViewport(LAPTOP)
  return laptop
}

/** A column of a table that can be neither seen nor scrolled to inside its card, or a card off the page. */
export interface HiddenColumn {
  table: string
  column: string
  why: string
}

/**
 * Every column of every table on the page is inside the viewport's width, or
 * reachable by scrolling its own card (the `.table-wrap` box, overflow-x
 * auto) which itself stays on the page; and the page never scrolls sideways.
 */
export async function hiddenColumns(page: Page): Promise<HiddenColumn[]> {
  return (await page.evaluate(() => {
    const g = globalThis as any
    const doc = g.document.documentElement
    const width = g.innerWidth as number
    const out: { table: string; column: string; why: string }[] = []
    if (doc.scrollWidth > doc.clientWidth + 1) out.push({ table: '(page)', column: '', why: `the page is ${doc.scrollWidth} px wide in ${doc.clientWidth}` })
    for (const t of g.document.querySelectorAll('table')) {
      const name = t.closest('[id]')?.id || t.querySelector('caption')?.textContent || 'table'
      // A closed <details> shows none; uPlot's legend is the chart's, drawn inside it.
      if (t.closest('details:not([open])') || t.closest('.uplot')) continue
      const wrap = t.closest('.table-wrap')
      if (!wrap) {
        out.push({ table: name, column: '', why: 'not in a scrolling card' })
        continue
      }
      const box = wrap.getBoundingClientRect()
      if (box.left < -1 || box.right > width + 1)
        out.push({ table: name, column: '', why: `its card spans ${Math.round(box.left)}..${Math.round(box.right)} of ${width}` })
      const scrolls = ['auto', 'scroll'].includes(g.getComputedStyle(wrap).overflowX)
      for (const th of t.querySelectorAll('thead th')) {
        const r = th.getBoundingClientRect()
        // Where the column ends within the card's scrolled content.
        const end = r.right - (box.left + wrap.clientLeft) + wrap.scrollLeft
        const seen = r.left >= box.left - 1 && r.right <= box.right + 1
        const reachable = scrolls && end <= wrap.scrollWidth + 2
        if (!seen && !reachable)
          out.push({
            table: name,
            column: (th.textContent ?? '').trim(),
            why: `outside its card (${Math.round(r.left)}..${Math.round(r.right)} in ${Math.round(box.left)}..${Math.round(box.right)}, scrolls ${wrap.scrollWidth} in ${wrap.clientWidth}) and not reachable by scrolling it`,
          })
      }
    }
    return out
  })) as HiddenColumn[]
}

/** The columns of every table that do not fit in their card without scrolling (at a laptop's width, the ones that matter must). */
export async function scrolledColumns(page: Page): Promise<HiddenColumn[]> {
  return (await page.evaluate(() => {
    const g = globalThis as any
    const out: { table: string; column: string; why: string }[] = []
    for (const t of g.document.querySelectorAll('.table-wrap table')) {
      if (t.closest('details:not([open])')) continue
      const box = t.closest('.table-wrap').getBoundingClientRect()
      for (const th of t.querySelectorAll('thead th')) {
        const r = th.getBoundingClientRect()
        if (r.right > box.right + 1)
          out.push({
            table: t.closest('[id]')?.id ?? '',
            column: (th.textContent ?? '').trim(),
            why: `ends at ${Math.round(r.right)}, the card at ${Math.round(box.right)}`,
          })
      }
    }
    return out
  })) as HiddenColumn[]
}
