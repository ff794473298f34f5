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
