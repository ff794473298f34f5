/** @jsxImportSource hono/jsx */
/**
 * The page frame every console page shares: landmarks (header, nav, main), a
 * skip link, the navigation (a disclosure on a phone, a side bar from 900px),
 * the operator and sign-out, and the account + period selector. Rendered with
 * hono/jsx, which escapes every text and attribute value.
 */
import type { Child } from 'hono/jsx'
import { ASSETS, assetUrl } from '../assets.ts'

export const PERIODS = ['1h', '24h', '7d', '30d'] as const
export type Period = (typeof PERIODS)[number]
/** What each range label means, said beside the picker (docs/console.md#times-and-codes). */
export const PERIOD_WORDS: Record<Period, string> = { '1h': 'last hour', '24h': 'last 24 hours', '7d': 'last 7 days', '30d': 'last 30 days' }

export interface Scope {
  /** The chosen account, or undefined for all of them. */
  account: string | undefined
  period: Period
  /** Every account, for the selector. */
  accounts: string[]
}

export interface PageFrame {
  title: string
  /** The page's path under /console (its nav entry is marked current). */
  path: string
  operator: string
  csrf: string
  /** Present on pages whose figures depend on it. */
  scope?: Scope
  /** Other query parameters the period links keep (a search, say). */
  keep?: Record<string, string>
  flash?: { kind: 'ok' | 'error'; text: string }
}

export const NAV: { path: string; label: string }[] = [
  { path: '/console/', label: 'Overview' },
  { path: '/console/verifications', label: 'Verifications' },
  { path: '/console/workflows', label: 'Workflows' },
  { path: '/console/fraud', label: 'Fraud guard' },
  { path: '/console/keys', label: 'Keys and accounts' },
  { path: '/console/webhooks', label: 'Webhooks' },
  { path: '/console/system', label: 'System' },
  { path: '/console/audit', label: 'Audit log' },
]

/**
 * htmx settings (meta tag, read by htmx; no script): nothing evaluated, no script
 * tags run from swapped HTML, no inline style injected (the CSP forbids it), and
 * no history cache, since it keeps pages in localStorage and a page may show a
 * new API key once.
 */
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
  refreshOnHistoryMiss: true,
  // A refused action (4xx) still shows its page with the reason.
  responseHandling: [
    { code: '204', swap: false },
    { code: '[2345]..', swap: true },
  ],
})

export const CSRF_HEADER = 'x-csrf-token'
export const CSRF_FIELD = '_csrf'

function Head(props: { title: string; charts?: boolean }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="color-scheme" content="light" />
      <meta name="referrer" content="same-origin" />
      <meta name="htmx-config" content={HTMX_CONFIG} />
      <title>{`${props.title} · otpd console`}</title>
      <link rel="icon" type="image/svg+xml" href={assetUrl(ASSETS.favicon)} />
      <link rel="stylesheet" href={assetUrl(ASSETS.css)} />
      <link rel="stylesheet" href={assetUrl(ASSETS.uplotCss)} />
      <script src={assetUrl(ASSETS.htmx)} defer />
      <script src={assetUrl(ASSETS.uplot)} defer />
      <script src={assetUrl(ASSETS.js)} defer />
    </head>
  )
}

/** A link to `path` with the scope and `keep` parameters, `change` over them. */
export function scopedHref(path: string, frame: Pick<PageFrame, 'scope' | 'keep'>, change: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams(frame.keep ?? {})
  if (frame.scope?.account) q.set('account', frame.scope.account)
  if (frame.scope) q.set('period', frame.scope.period)
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) q.delete(k)
    else q.set(k, v)
  }
  const s = q.toString()
  return s ? `${path}?${s}` : path
}

function NavList(props: { path: string }) {
  return (
    <ul>
      {NAV.map((n) => (
        <li>
          <a href={n.path} aria-current={n.path === props.path ? 'page' : undefined}>
            {n.label}
          </a>
        </li>
      ))}
    </ul>
  )
}

function ScopePicker(props: { frame: PageFrame; scope: Scope }) {
  const { frame, scope } = props
  return (
    <div class="scope">
      <form method="get" action={frame.path}>
        {Object.entries(frame.keep ?? {}).map(([k, v]) => (
          <input type="hidden" name={k} value={v} />
        ))}
        <input type="hidden" name="period" value={scope.period} />
        <div>
          <label for="scope-account">Account</label>
          <select id="scope-account" name="account" data-autosubmit="1">
            <option value="" selected={scope.account === undefined}>
              All accounts
            </option>
            {scope.accounts.map((a) => (
              <option value={a} selected={a === scope.account}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="secondary">
          Show
        </button>
      </form>
      <nav aria-label="Period">
        <ul class="periods">
          {PERIODS.map((p) => (
            <li>
              <a
                href={scopedHref(frame.path, frame, { period: p })}
                aria-current={p === scope.period ? 'true' : undefined}
                title={`the ${PERIOD_WORDS[p]} up to now`}
              >
                {p}
              </a>
            </li>
          ))}
        </ul>
        <p class="hint period-note">Showing the {PERIOD_WORDS[scope.period]} up to now (times in UTC).</p>
      </nav>
    </div>
  )
}

/** A whole page: `<!doctype html>` and the frame around `children`. */
export function page(frame: PageFrame, children: Child): string {
  const body = (
    <html lang="en">
      <Head title={frame.title} />
      <body hx-boost="true" hx-headers={JSON.stringify({ [CSRF_HEADER]: frame.csrf })}>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/console/">
            otpd console
          </a>
          <nav class="nav nav-menu" aria-label="Console (menu)">
            <details>
              <summary>Menu</summary>
              <NavList path={frame.path} />
            </details>
          </nav>
          <div class="who">
            <span>
              Signed in as <strong>{frame.operator}</strong>
            </span>
            <form method="post" action="/console/sign-out">
              <input type="hidden" name={CSRF_FIELD} value={frame.csrf} />
              <button type="submit">Sign out</button>
            </form>
          </div>
        </header>
        <div class="shell">
          <nav class="nav nav-side" aria-label="Console">
            <NavList path={frame.path} />
          </nav>
          <main id="main">
            <h1>{frame.title}</h1>
            {frame.flash ? (
              <p class={`flash ${frame.flash.kind}`} role={frame.flash.kind === 'error' ? 'alert' : 'status'}>
                {frame.flash.text}
              </p>
            ) : null}
            {frame.scope ? <ScopePicker frame={frame} scope={frame.scope} /> : null}
            {children}
          </main>
        </div>
      </body>
    </html>
  )
  return `<!doctype html>${body}`
}

/** The sign-in page: no frame, no navigation. It posts to /console/sign-in. */
export function signInPage(opts: { csrf?: string; error?: string; name?: string; next?: string }): string {
  const body = (
    <html lang="en">
      <Head title="Sign in" />
      <body>
        <main id="main" class="signin">
          <div class="panel">
            <h1>otpd console</h1>
            {opts.error ? (
              <p class="flash error" role="alert">
                {opts.error}
              </p>
            ) : null}
            <form method="post" action="/console/sign-in">
              {opts.csrf ? <input type="hidden" name={CSRF_FIELD} value={opts.csrf} /> : null}
              {opts.next ? <input type="hidden" name="next" value={opts.next} /> : null}
              <label for="signin-name">Operator</label>
              <input id="signin-name" name="name" autocomplete="username" required value={opts.name ?? ''} />
              <label for="signin-password">Password</label>
              <input id="signin-password" name="password" type="password" autocomplete="current-password" required />
              <button type="submit">Sign in</button>
            </form>
          </div>
        </main>
      </body>
    </html>
  )
  return `<!doctype html>${body}`
}
