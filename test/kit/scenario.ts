/**
 * A route's status matrix as a table, in the style of PocketBase's
 * `ApiScenario`: each row names a case, the request (method, path, key,
 * headers, body), the expected status, the expected body (the documented
 * error, or fragments of the raw text and fields), and the side effects to
 * check afterwards. `scenarioTable` runs each row as a test on a fresh harness.
 */
import { describe, expect, test } from 'bun:test'
import { expectError, harnessPerTest, sendReal, type Harness, type HarnessOptions, type Result } from './harness.ts'

/** What a row's set-up made (a verification's id and code, another key), handed to its request and checks. */
export interface ScenarioContext {
  h: Harness
  id: string
  code: string
  key: string
}

type Of<T> = T | ((c: ScenarioContext) => T)

export interface ApiScenario {
  name: string
  /** Default POST. */
  method?: string
  path: Of<string>
  /** The API key sent as a Bearer token: the harness's by default, null for none. */
  key?: Of<string | null>
  /** Default: `content-type: application/json` when there is a body. */
  headers?: Record<string, string>
  /** JSON body, or `raw` text sent as is. */
  body?: Of<Record<string, unknown>>
  raw?: string
  harness?: HarnessOptions
  /** Runs before the request; what it returns goes into the context. */
  setup?: (h: Harness) => Promise<Partial<Omit<ScenarioContext, 'h'>>>
  expectedStatus: number
  /** The documented error body: `{ error, request_id }` with this message. */
  expectedError?: string
  /** Fields the JSON body holds (toMatchObject). */
  expectedBody?: Of<Record<string, unknown>>
  /** Fragments of the raw body text. */
  expectedContent?: string[]
  /** Checks after the answer: what changed, or did not (balance, status, deliveries). */
  expectedEffects?: (c: ScenarioContext, r: Result & { text: string }) => Promise<void> | void
}

const value = <T>(v: Of<T>, c: ScenarioContext): T => (typeof v === 'function' ? (v as (c: ScenarioContext) => T)(c) : v)

async function runScenario(s: ApiScenario, start: (o?: HarnessOptions) => Promise<Harness>): Promise<void> {
  const h = await start(s.harness)
  const c: ScenarioContext = { h, id: '', code: '', key: h.key, ...(await s.setup?.(h)) }
  const method = s.method ?? 'POST'
  const key = s.key === undefined ? c.key : value(s.key, c)
  const payload = s.raw ?? (s.body === undefined ? undefined : JSON.stringify(value(s.body, c)))
  const headers: Record<string, string> = {
    ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    ...(key === null ? {} : { authorization: `Bearer ${key}` }),
    ...s.headers,
  }
  const res = await h.server.http.handle(new Request(`http://localhost${value(s.path, c)}`, { method, headers, body: payload }))
  const text = await res.text()
  const r = { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, any>) : {}, text }
  if (s.expectedError !== undefined) expectError(r, s.expectedStatus, s.expectedError)
  else expect(r.status).toBe(s.expectedStatus)
  if (s.expectedBody !== undefined) expect(r.json).toMatchObject(value(s.expectedBody, c))
  for (const fragment of s.expectedContent ?? []) expect(r.text).toContain(fragment)
  await s.expectedEffects?.(c, r)
}

/** One test per row, under `route`, each on a harness of its own (`defaults`, then the row's `harness`; closed after it). */
export function scenarioTable(route: string, table: ApiScenario[], defaults: HarnessOptions = {}): void {
  describe(route, () => {
    const start = harnessPerTest(defaults)
    for (const s of table) test(s.name, () => runScenario(s, start))
  })
}

type Setup = NonNullable<ApiScenario['setup']>

async function pendingSend(h: Harness): Promise<{ id: string; code: string }> {
  const v = await sendReal(h)
  await h.server.storage.settled()
  return v
}

/** The set-ups the route tables share: a verification in each state, and keys other than the harness's. */
export const given = {
  /** A pending verification to a real recipient (one credit debited), its delivery's `accepted` recorded (it follows the answer). */
  pending: pendingSend satisfies Setup,
  /** A verification whose code was used. */
  approved: (async (h) => {
    const v = await sendReal(h)
    expect((await h.verify({ verification_id: v.id, code: v.code })).json.verified).toBe(true)
    return v
  }) satisfies Setup,
  /** A verification canceled by its key. */
  canceled: (async (h) => {
    const v = await pendingSend(h)
    expect((await h.call(`/api/v1/verifications/${v.id}/cancel`, undefined, { headers: {} })).status).toBe(200)
    return v
  }) satisfies Setup,
  /** A verification past its expiry (60 s, the clock moved on). */
  expired: (async (h) => {
    const v = await sendReal(h, '+14155550124', { expires_in: 60 })
    h.clock.advance(60_000)
    return v
  }) satisfies Setup,
  /** A verification that no provider took (send answered 500, the credit refunded). */
  failed: (async (h) => {
    h.delivery.fail = true
    expect((await h.send({ channel: 'sms', recipient: '+14155550125' })).status).toBe(500)
    h.delivery.fail = false
    return { id: (await h.sql("SELECT id FROM verifications WHERE status = 'failed'"))[0]!.id as string }
  }) satisfies Setup,
  /** A pending verification, sent with another key of the same account: `key` is that key. */
  othersPending: (async (h) => {
    const { key } = await h.server.admin.createKey({ name: 'other' })
    const r = await h.send({ channel: 'sms', recipient: '+14155550126' }, key)
    expect(r.status).toBe(200)
    return { id: r.json.verification_id as string, code: h.delivery.lastCode() }
  }) satisfies Setup,
  /** A pending verification, and `key` a disabled key. */
  disabledKey: (async (h) => {
    const v = await sendReal(h)
    const off = await h.server.admin.createKey({ name: 'off' })
    await h.server.admin.setKeyStatus(String(off.id), 'disabled')
    return { ...v, key: off.key }
  }) satisfies Setup,
}

/** The documented 401s and 403 (docs/api.md#errors). */
export const KEY_ERRORS = {
  missing: 'API key is required. Provide it via Authorization: Bearer <token> or x-api-key header',
  invalid: 'Invalid API key',
  disabled: 'API key is disabled',
} as const
/** A well-formed key that no database holds. */
export const UNKNOWN_KEY = `otpd_${'y'.repeat(40)}`
