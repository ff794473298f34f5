/**
 * The console on a harness (test/kit/harness.ts): a server whose admin
 * listener serves the console, an operator made through the domain, and
 * requests to the admin app with the session cookie and CSRF token; or the
 * read endpoints alone (`consoleOf`).
 */
import { Elysia } from 'elysia'
import { consoleReadRoutes } from '../../src/console/read-routes.ts'
import { createHarness, type Harness, type HarnessOptions, type Result } from './harness.ts'

export const OPERATOR = 'ops-alice'
export const PASSWORD = 'correct horse battery staple'

export interface ConsoleCall {
  method?: string
  /** JSON body (or with `form`, form fields). */
  body?: Record<string, unknown>
  form?: boolean
  session?: Session | null
  /** Override the CSRF header: null sends none. */
  csrf?: string | null
  headers?: Record<string, string>
}

export interface Session {
  cookie: string
  csrf: string
}

export interface ConsoleResult {
  status: number
  headers: Headers
  json: Record<string, any>
  text: string
}

export interface ConsoleHarness extends Harness {
  /** A request to the admin listener's app. */
  admin(path: string, opts?: ConsoleCall): Promise<ConsoleResult>
  /** Signs in through the JSON API; throws unless it succeeds. */
  signIn(name?: string, password?: string): Promise<Session>
  session: Session
}

export async function consoleHarness(opts: HarnessOptions = {}): Promise<ConsoleHarness> {
  const config = structuredClone(opts.config ?? {})
  config.server = { admin_listen: '127.0.0.1:0', ...(config.server ?? {}) }
  const h = await createHarness({ ...opts, config })
  await h.server.operators.add(OPERATOR, PASSWORD)
  const admin = async (path: string, o: ConsoleCall = {}): Promise<ConsoleResult> => {
    const method = o.method ?? (o.body ? 'POST' : 'GET')
    const headers: Record<string, string> = { ...(o.headers ?? {}) }
    const session = o.session === undefined ? c.session : o.session
    if (session) headers.cookie = `otpd_console=${session.cookie}`
    const csrf = o.csrf === undefined ? session?.csrf : o.csrf
    if (csrf != null && method !== 'GET') headers['x-csrf-token'] = csrf
    let body: string | undefined
    if (o.body !== undefined) {
      if (o.form) {
        headers['content-type'] = 'application/x-www-form-urlencoded'
        body = new URLSearchParams(Object.entries(o.body).map(([k, v]): [string, string] => [k, String(v)])).toString()
      } else {
        headers['content-type'] = 'application/json'
        body = JSON.stringify(o.body)
      }
    }
    const res = await h.server.adminHttp.handle(new Request(`http://localhost${path}`, { method, headers, body }))
    const text = await res.text()
    let json: Record<string, any> = {}
    if ((res.headers.get('content-type') ?? '').includes('application/json') && text) json = JSON.parse(text)
    return { status: res.status, headers: res.headers, json, text }
  }
  const signIn = async (name = OPERATOR, password = PASSWORD): Promise<Session> => {
    const r = await admin('/console/api/session', { body: { name, password }, session: null })
    if (r.status !== 200) throw new Error(`sign-in answered ${r.status}: ${r.text}`)
    const cookie = /otpd_console=([^;]*)/.exec(r.headers.get('set-cookie') ?? '')![1]!
    return { cookie, csrf: r.json.csrf_token }
  }
  const c: ConsoleHarness = Object.assign(h, { admin, signIn, session: undefined as unknown as Session })
  c.session = await signIn()
  return c
}

/**
 * The console's read endpoints under test: the plugin alone (the session
 * guard wraps it elsewhere), on the harness's server, driven with
 * app.handle(). `get` brings the rollups up to date first unless told not to.
 */
export function consoleOf(h: Harness) {
  const app = new Elysia().use(consoleReadRoutes(h.server.consoleRead))
  return {
    async get(path: string, opts: { rollup?: boolean } = {}): Promise<Result> {
      // A send settles after its answer (otp/send.ts): its record first, then the rollup.
      await h.server.storage.settled()
      if (opts.rollup !== false) await h.server.rollup.catchUp()
      const res = await app.handle(new Request(`http://localhost${path}`))
      const text = await res.text()
      return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : {} }
    },
  }
}

/** Numbers of three countries (fictional ranges). */
export const NUMBERS = {
  US: (i: number) => `+1415555${String(1000 + i).padStart(4, '0')}`,
  GB: (i: number) => `+44740012${String(1000 + i).padStart(4, '0')}`,
  DE: (i: number) => `+49151${String(1000000 + i).padStart(7, '0')}`,
}
