/**
 * The console on a harness (test/kit/harness.ts): a server whose admin
 * listener serves the console, an operator made through the domain, and
 * requests to the admin app with the session cookie and CSRF token.
 */
import { createHarness, type Harness, type HarnessOptions } from './harness.ts'

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
