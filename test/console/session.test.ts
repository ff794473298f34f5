/**
 * The console's sign-in and session (docs/console.md#security-model): where
 * it is served, the cookie, idle expiry by the clock, sign-out, revocation
 * by disable and password reset, the CSRF token, the failed sign-in limit,
 * and the headers of every answer.
 */
import { expect, test } from 'bun:test'
import { createHarness } from '../kit/harness.ts'
import { type ConsoleHarness, consoleHarness, OPERATOR, PASSWORD } from '../kit/console.ts'
import {
  MAX_FAILED_PER_OPERATOR,
  MAX_FAILED_PER_OPERATOR_ANYWHERE,
  SESSION_IDLE_MS,
  SIGN_IN_GUARD_WINDOW_MS,
  SIGN_IN_WINDOW_MS,
} from '../../src/otp/operators.ts'
import { clientAddress } from '../../src/console/http.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

/** Tests that check many passwords (argon2id is slow on purpose). */
const SLOW = 60_000
async function harness(config: Record<string, any> = {}): Promise<ConsoleHarness> {
  const h = closeAfterTest(await consoleHarness({ config }))
  return h
}

test('the API listener answers 404 for /console/ and /console/api/, with or without a session', async () => {
  const h = await harness()
  for (const path of ['/console/', '/console', '/console/sign-in', '/console/api/session', '/console/api/keys']) {
    const r = await h.call(path, undefined, { method: 'GET', key: null, headers: { cookie: `otpd_console=${h.session.cookie}` } })
    expect({ path, status: r.status }).toEqual({ path, status: 404 })
  }
  const post = await h.call('/console/api/session', { name: OPERATOR, password: PASSWORD }, { key: null })
  expect(post.status).toBe(404)
})

test('without admin_listen, or with console.enabled = false, the admin app has no console', async () => {
  const off = await createHarness({ config: { server: { admin_listen: '127.0.0.1:0' }, console: { enabled: false } } })
  closeAfterTest(off)
  expect(off.server.consoleOn).toBe(false)
  expect((await off.server.adminHttp.handle(new Request('http://localhost/console/'))).status).toBe(404)
  const none = await createHarness()
  closeAfterTest(none)
  expect(none.server.consoleOn).toBe(false)
  const on = await harness()
  expect(on.server.consoleOn).toBe(true)
})

test('sign-in sets an HttpOnly, SameSite=Strict cookie on /console; the session names the operator and its CSRF token', async () => {
  const h = await harness()
  const r = await h.admin('/console/api/session', { body: { name: OPERATOR, password: PASSWORD }, session: null })
  expect(r.status).toBe(200)
  const cookie = r.headers.get('set-cookie')!
  expect(cookie).toMatch(/^otpd_console=[0-9A-Za-z]{43}; Path=\/console; HttpOnly; SameSite=Strict$/)
  expect(r.json.operator).toBe(OPERATOR)
  expect(r.json.csrf_token).toMatch(/^[0-9a-f]{64}$/)
  const me = await h.admin('/console/api/session')
  expect(me.status).toBe(200)
  expect(me.json.operator).toBe(OPERATOR)
  // Only the token's HMAC is stored.
  const token = /otpd_console=([^;]*)/.exec(cookie)![1]!
  const rows = await h.sql('SELECT token_hash FROM console_sessions')
  expect(rows.length).toBe(2)
  for (const row of rows) expect(Buffer.from(row.token_hash).toString('latin1')).not.toContain(token)
})

test('the cookie is Secure behind a trusted proxy that says https, and not when the proxy is not trusted', async () => {
  const trusted = await harness({ console: { trust_proxy: true } })
  const a = await trusted.admin('/console/api/session', {
    body: { name: OPERATOR, password: PASSWORD },
    session: null,
    headers: { 'x-forwarded-proto': 'https' },
  })
  expect(a.headers.get('set-cookie')).toEndWith('; Secure')
  const untrusted = await harness()
  const b = await untrusted.admin('/console/api/session', {
    body: { name: OPERATOR, password: PASSWORD },
    session: null,
    headers: { 'x-forwarded-proto': 'https' },
  })
  expect(b.headers.get('set-cookie')).not.toContain('Secure')
})

test('no session: 401 under /console/api/, a redirect to the sign-in page for a page', async () => {
  const h = await harness()
  const api = await h.admin('/console/api/session', { session: null })
  expect(api.status).toBe(401)
  expect(api.json.error).toBe('Sign in to the console first')
  const wrong = await h.admin('/console/api/session', { session: { cookie: 'x'.repeat(43), csrf: '' } })
  expect(wrong.status).toBe(401)
  const page = await h.admin('/console/', { session: null })
  expect(page.status).toBe(303)
  expect(page.headers.get('location')).toBe('/console/sign-in?next=%2Fconsole%2F')
})

test(
  'a wrong password is refused with one message for an unknown name, a disabled operator and a wrong password',
  async () => {
    const h = await harness()
    await h.server.operators.add('ops-bob', 'another long password')
    await h.server.operators.disable('ops-bob')
    for (const [name, password] of [
      [OPERATOR, 'wrong password here'],
      ['nobody', PASSWORD],
      ['ops-bob', 'another long password'],
    ] as const) {
      const r = await h.admin('/console/api/session', { body: { name, password }, session: null })
      expect({ name, status: r.status, error: r.json.error }).toEqual({ name, status: 401, error: 'Invalid operator name or password' })
      expect(r.headers.get('set-cookie')).toBeNull()
    }
  },
  SLOW,
)

test(
  'failed sign-ins per operator: then 429 with Retry-After, even with the right password, until the window passes',
  async () => {
    const h = await harness()
    for (let i = 0; i < MAX_FAILED_PER_OPERATOR; i++) {
      const r = await h.admin('/console/api/session', { body: { name: OPERATOR, password: `wrong password ${i}` }, session: null })
      expect(r.status).toBe(401)
    }
    const limited = await h.admin('/console/api/session', { body: { name: OPERATOR, password: PASSWORD }, session: null })
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe(String(SIGN_IN_WINDOW_MS / 1000))
    expect(limited.json.error).toBe(`Too many failed sign-ins. Please try again in ${SIGN_IN_WINDOW_MS / 1000} seconds.`)
    expect(limited.json.retry_after).toBe(SIGN_IN_WINDOW_MS / 1000)
    h.clock.advance(SIGN_IN_WINDOW_MS - 60_000)
    expect((await h.admin('/console/api/session', { body: { name: OPERATOR, password: PASSWORD }, session: null })).headers.get('retry-after')).toBe('60')
    h.clock.advance(60_000)
    await h.signIn()
  },
  SLOW,
)

test(
  'a successful sign-in is not counted: an operator who signs in often is never limited',
  async () => {
    const h = await harness()
    for (let i = 0; i < MAX_FAILED_PER_OPERATOR + 2; i++) await h.signIn()
  },
  SLOW,
)

test(
  'failed sign-ins behind a trusted proxy count per client address and name: one address locks out neither another name nor another address',
  async () => {
    const h = await harness({ console: { trust_proxy: true } })
    const from = (ip: string) => ({ 'x-forwarded-for': `198.51.100.9, ${ip}` })
    const attempt = (name: string, password: string, ip: string) =>
      h.admin('/console/api/session', { body: { name, password }, session: null, headers: from(ip) })
    // Twenty failures across names from one address (every operator is 127.0.0.1 behind an SSH tunnel).
    for (let i = 0; i < 20; i++) expect((await attempt(`nobody-${i}`, 'not the password', '203.0.113.5')).status).toBe(401)
    expect((await attempt(OPERATOR, PASSWORD, '203.0.113.5')).status).toBe(200)
    for (let i = 0; i < MAX_FAILED_PER_OPERATOR; i++) expect((await attempt(OPERATOR, `wrong password ${i}`, '203.0.113.5')).status).toBe(401)
    const limited = await attempt(OPERATOR, PASSWORD, '203.0.113.5')
    expect(limited.status, h.logs.join('\n')).toBe(429)
    expect(limited.headers.get('retry-after')).toBe(String(SIGN_IN_WINDOW_MS / 1000))
    // Another address, and another name from the same address, are not limited.
    expect((await attempt(OPERATOR, PASSWORD, '203.0.113.6')).status).toBe(200)
    await h.server.operators.add('ops-bob', 'another long password')
    expect((await attempt('ops-bob', 'another long password', '203.0.113.5')).status).toBe(200)
  },
  SLOW,
)

test(
  'the slower guard: failures of one name from many addresses together limit that name everywhere for an hour',
  async () => {
    const h = await harness({ console: { trust_proxy: true } })
    const attempt = (password: string, ip: string) =>
      h.admin('/console/api/session', { body: { name: OPERATOR, password }, session: null, headers: { 'x-forwarded-for': ip } })
    for (let i = 0; i < MAX_FAILED_PER_OPERATOR_ANYWHERE; i++) {
      expect((await attempt(`wrong password ${i}`, `198.51.100.${i % 200}`)).status).toBe(401)
      if (i % 10 === 9) h.clock.advance(60_000)
    }
    const limited = await attempt(PASSWORD, '203.0.113.77')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBe(SIGN_IN_GUARD_WINDOW_MS / 1000 - 5 * 60)
    h.clock.advance(SIGN_IN_GUARD_WINDOW_MS)
    expect((await attempt(PASSWORD, '203.0.113.77')).status).toBe(200)
  },
  SLOW * 2,
)

test('behind a trusted proxy, a last X-Forwarded-For hop that is not a bare address counts as the peer, not as no address', () => {
  const at = (hop: string | null) =>
    clientAddress(new Request('http://localhost/', { headers: hop === null ? {} : { 'x-forwarded-for': `198.51.100.9, ${hop}` } }), '192.0.2.7', {
      trustProxy: true,
    })
  for (const hop of ['[2001:db8::1]', '1.2.3.4:443', 'fe80::1%eth0', 'unknown', '', ' '])
    expect({ hop, address: at(hop) }).toEqual({ hop, address: '192.0.2.7' })
  expect(at('203.0.113.5')).toBe('203.0.113.5')
  expect(at('2001:db8::1')).toBe('2001:db8:0:0::/64')
  expect(at(null)).toBe('192.0.2.7')
})

test('the session ends after 12 h without a request (by the clock), and a request keeps it alive', async () => {
  const h = await harness()
  h.clock.advance(SESSION_IDLE_MS - 60_000)
  expect((await h.admin('/console/api/session')).status).toBe(200)
  h.clock.advance(SESSION_IDLE_MS - 60_000)
  expect((await h.admin('/console/api/session')).status).toBe(200)
  h.clock.advance(SESSION_IDLE_MS)
  expect((await h.admin('/console/api/session')).status).toBe(401)
})

test('sign-out (JSON, with the CSRF token) ends the session and clears the cookie', async () => {
  const h = await harness()
  const r = await h.admin('/console/api/session', { method: 'DELETE' })
  expect(r.status).toBe(200)
  expect(r.headers.get('set-cookie')).toContain('Max-Age=0')
  expect((await h.admin('/console/api/session')).status).toBe(401)
})

test(
  'disabling the operator, or resetting its password, revokes its sessions at once',
  async () => {
    const h = await harness()
    const second = await h.signIn()
    const r = await h.server.operators.disable(OPERATOR)
    expect(r.sessionsEnded).toBe(2)
    expect((await h.admin('/console/api/session')).status).toBe(401)
    expect((await h.admin('/console/api/session', { session: second })).status).toBe(401)
    await h.server.operators.enable(OPERATOR)
    // Enabling again does not bring the sessions back.
    expect((await h.admin('/console/api/session', { session: second })).status).toBe(401)
    const third = await h.signIn()
    await h.server.operators.resetPassword(OPERATOR, 'a brand new password')
    expect((await h.admin('/console/api/session', { session: third })).status).toBe(401)
    await expect(h.signIn()).rejects.toThrow('401')
    await h.signIn(OPERATOR, 'a brand new password')
  },
  SLOW,
)

test('a state-changing request without the CSRF token, or with a wrong one, answers 403 and changes nothing', async () => {
  const h = await harness()
  for (const csrf of [null, 'f'.repeat(64), 'short']) {
    const r = await h.admin('/console/api/session', { method: 'DELETE', csrf })
    expect(r.status).toBe(403)
    expect(r.json.error).toContain('CSRF token')
  }
  expect((await h.admin('/console/api/session')).status).toBe(200)
  // A form carries it as _csrf.
  const form = await h.admin('/console/sign-out', { body: { _csrf: 'wrong' }, form: true, csrf: null })
  expect(form.status).toBe(403)
  expect((await h.admin('/console/api/session')).status).toBe(200)
  const ok = await h.admin('/console/sign-out', { body: { _csrf: h.session.csrf }, form: true, csrf: null })
  expect(ok.status).toBe(303)
  expect((await h.admin('/console/api/session')).status).toBe(401)
})

test(
  'the HTML form: sign-in redirects to the page asked for, a wrong password shows the form again with 401',
  async () => {
    const h = await harness()
    const page = await h.admin('/console/sign-in?next=%2Fconsole%2Faudit', { session: null })
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.text).toContain('action="/console/sign-in"')
    // No inline script: every script is a file the console serves (the CSP refuses any other).
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc="\/console\/assets\/)/)
    expect(page.text).not.toMatch(/<script[^>]*>[^<]/)
    expect(page.text).not.toMatch(/\son[a-z]+=/i)
    const ok = await h.admin('/console/sign-in', { body: { name: OPERATOR, password: PASSWORD, next: '/console/audit' }, form: true, session: null })
    expect(ok.status).toBe(303)
    expect(ok.headers.get('location')).toBe('/console/audit')
    expect(ok.headers.get('set-cookie')).toContain('HttpOnly')
    // Never to another site.
    for (const next of ['//evil.example/x', 'https://evil.example/', '/console//evil.example', '/\\evil.example']) {
      const r = await h.admin('/console/sign-in', { body: { name: OPERATOR, password: PASSWORD, next }, form: true, session: null })
      expect({ next, location: r.headers.get('location') }).toEqual({ next, location: '/console/' })
    }
    const bad = await h.admin('/console/sign-in', { body: { name: OPERATOR, password: 'wrong password x' }, form: true, session: null })
    expect(bad.status).toBe(401)
    expect(bad.text).toContain('Invalid operator name or password')
  },
  SLOW,
)

test('every console answer carries the CSP (no inline script), nosniff, no-referrer and no-store', async () => {
  const h = await harness()
  const answers = [
    await h.admin('/console/api/session'),
    await h.admin('/console/api/session', { session: null }),
    await h.admin('/console/', { session: null }),
    await h.admin('/console/'),
    await h.admin('/console/sign-in', { session: null }),
    await h.admin('/console/api/nothing-here'),
    await h.admin('/console/api/session', { method: 'PUT' }),
    await h.admin('/console/api/session', { method: 'DELETE', csrf: null }),
  ]
  for (const r of answers) {
    const csp = r.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    expect(r.headers.get('referrer-policy')).toBe('no-referrer')
    expect(r.headers.get('cache-control')).toBe('no-store')
  }
  expect(answers[5]!.status).toBe(404)
  expect(answers[6]!.status).toBe(405)
})

test('a bad sign-in body is a 400 that names the field', async () => {
  const h = await harness()
  const cases: [unknown, string][] = [
    [{ name: OPERATOR }, 'password is required'],
    [{ name: OPERATOR, password: 5 }, 'password must be 1-1024 characters'],
    [{ name: OPERATOR, password: PASSWORD, extra: 1 }, "unknown field 'extra'"],
  ]
  for (const [body, error] of cases) {
    const r = await h.admin('/console/api/session', { body: body as Record<string, unknown>, session: null })
    expect({ status: r.status, error: r.json.error }).toEqual({ status: 400, error })
  }
  const raw = await h.server.adminHttp.handle(
    new Request('http://localhost/console/api/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }),
  )
  expect(raw.status).toBe(400)
})
