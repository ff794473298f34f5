/**
 * The console's HTML pages and form actions, under /console/. Each page reads
 * through the same functions as the JSON under /console/api/ (no HTTP to
 * itself); each action calls the same audited services as the CLI, as the
 * signed-in operator. A page without a session redirects to the sign-in page;
 * an action without a session is 401, without the CSRF token 403, and neither
 * changes anything. Refused input re-renders the page with the reason (400).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import type { Admin } from '../../otp/admin.ts'
import { DEFAULT_ACCOUNT, OperatorError } from '../../otp/admin.ts'
import type { FraudAdmin } from '../../otp/fraud-admin.ts'
import type { Webhooks } from '../../otp/webhooks.ts'
import { CSRF_FIELD, CSRF_HEADER, type PageFrame, PERIODS, type Period, signInPage } from './layout.tsx'
import { type AuditRowView, auditPage } from './pages/audit.tsx'
import { type FraudView, fraudPage } from './pages/fraud.tsx'
import { type KeysView, keysPage } from './pages/keys.tsx'
import { type OverviewView, overviewPage } from './pages/overview.tsx'
import { type SystemView, systemPage } from './pages/system.tsx'
import { type SearchForm, type VerificationDetail, type VerificationSummary, verificationPage, verificationsPage } from './pages/verifications.tsx'
import { webhooksPage } from './pages/webhooks.tsx'

export const PERIOD_MS: Record<Period, number> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 }

export interface ConsoleSession {
  operator: string
  csrf: string
}

export interface ScopeQuery {
  account: string | undefined
  period: Period
}

/** What the pages read: the functions behind the JSON read endpoints. */
export interface ConsoleReads {
  overview(q: ScopeQuery): Promise<OverviewView>
  /** `recipient` is a full number or address: hashed as otpd stores it, never kept. */
  searchVerifications(q: ScopeQuery & { id?: string; recipient?: string; country?: string; status?: string }): Promise<VerificationSummary[]>
  verification(id: string): Promise<VerificationDetail | null>
  fraud(q: ScopeQuery): Promise<FraudView>
  system(): Promise<SystemView>
  audit(q: ScopeQuery): Promise<AuditRowView[]>
}

/** The operator use cases, acting (and audited) as `operator` from the console. */
export interface ConsoleActions {
  admin: Pick<Admin, 'createKey' | 'setKeyStatus' | 'addCredits' | 'deductCredits'>
  fraud: Pick<FraudAdmin, 'unblock' | 'setAccount'>
  webhooks: Pick<Webhooks, 'replay'>
}

export interface ConsoleUiDeps {
  /** The request's signed-in operator and its CSRF token, or null. */
  session(request: Request): Promise<ConsoleSession | null>
  reads: ConsoleReads
  actionsAs(operator: string): ConsoleActions
  admin: Admin
  fraud: FraudAdmin
  webhooks: Webhooks
  now(): number
}

const HTML = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }
const html = (body: string, status = 200) => new Response(body, { status, headers: HTML })
const digest = (s: string) => createHash('sha256').update(s).digest()
const sameToken = (a: string, b: string) => timingSafeEqual(digest(a), digest(b))

type Form = Record<string, string>
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '')

function scopeOf(query: Record<string, string | undefined>): ScopeQuery {
  const period = (PERIODS as readonly string[]).includes(query.period ?? '') ? (query.period as Period) : '24h'
  const account = query.account?.trim() || undefined
  return { account, period }
}

/** The refusal's message for the operator: a thrown OperatorError says what was wrong; anything else is a fault. */
function problem(err: unknown): string {
  if (err instanceof OperatorError) return err.message
  throw err
}

export function consolePages(deps: ConsoleUiDeps) {
  const frameFor = async (s: ConsoleSession, title: string, path: string, q: ScopeQuery, extra: Partial<PageFrame> = {}): Promise<PageFrame> => {
    const accounts = (await deps.admin.listAccounts()).map((a) => a.name)
    return { title, path, operator: s.operator, csrf: s.csrf, scope: { account: q.account, period: q.period, accounts }, ...extra }
  }

  const keysView = async (q: ScopeQuery, created?: KeysView['created']): Promise<KeysView> => {
    const account = q.account ?? DEFAULT_ACCOUNT
    const [accounts, keys, history, settings] = await Promise.all([
      deps.admin.listAccounts(),
      deps.admin.listKeys(q.account),
      deps.admin.history(account, 200),
      deps.fraud.account(account),
    ])
    const since = deps.now() - PERIOD_MS[q.period]
    return { accounts, keys, account, ledger: history.entries.filter((e) => e.createdAt >= since), settings, created }
  }
  const renderKeys = async (s: ConsoleSession, q: ScopeQuery, flash?: PageFrame['flash'], created?: KeysView['created']) =>
    keysPage(await frameFor(s, 'Keys and accounts', '/console/keys', q, { flash }), await keysView(q, created))

  const renderWebhooks = async (s: ConsoleSession, q: ScopeQuery, flash?: PageFrame['flash']) => {
    const [endpoints, events] = await Promise.all([deps.webhooks.list(q.account), deps.webhooks.events({ account: q.account, limit: 100 })])
    const since = deps.now() - PERIOD_MS[q.period]
    return webhooksPage(await frameFor(s, 'Webhooks', '/console/webhooks', q, { flash }), { endpoints, events: events.filter((e) => e.occurredAt >= since) })
  }
  const renderFraud = async (s: ConsoleSession, q: ScopeQuery, flash?: PageFrame['flash']) =>
    fraudPage(await frameFor(s, 'Fraud guard', '/console/fraud', q, { flash }), await deps.reads.fraud(q))

  /** A page: the session, or the sign-in page with a way back. */
  const guarded =
    (render: (s: ConsoleSession, query: Record<string, string | undefined>, params: Record<string, string>) => Promise<Response | string>) =>
    async ({ request, query, params }: { request: Request; query: Record<string, string | undefined>; params: Record<string, string> }) => {
      const s = await deps.session(request)
      if (!s) {
        const u = new URL(request.url)
        return new Response(null, {
          status: 303,
          headers: { location: `/console/sign-in?next=${encodeURIComponent(u.pathname + u.search)}`, 'cache-control': 'no-store' },
        })
      }
      const out = await render(s, query, params)
      return typeof out === 'string' ? html(out) : out
    }

  /** An action: the session and its CSRF token (form field or header), or nothing changes. */
  const action =
    (run: (s: ConsoleSession, form: Form, params: Record<string, string>) => Promise<Response>) =>
    async ({ request, body, params }: { request: Request; body: unknown; params: Record<string, string> }) => {
      const s = await deps.session(request)
      if (!s) return html(signInPage({ error: 'Your session has ended: sign in again.' }), 401)
      const form: Form = {}
      if (body && typeof body === 'object') for (const [k, v] of Object.entries(body)) form[k] = str(v)
      const presented = form[CSRF_FIELD] || request.headers.get(CSRF_HEADER) || ''
      if (!presented || !sameToken(presented, s.csrf)) {
        return html(
          signInPage({ error: 'This form is out of date (its security token did not match): nothing was changed. Reload the page and try again.' }),
          403,
        )
      }
      return run(s, form, params)
    }

  const keyAction = (status: 'active' | 'disabled' | 'revoked', verb: string) =>
    action(async (s, _form, params) => {
      const q = { account: undefined, period: '24h' as Period }
      try {
        const k = await deps.actionsAs(s.operator).admin.setKeyStatus(String(params.id), status)
        return html(await renderKeys(s, q, { kind: 'ok', text: `Key ${k.prefix} ${verb}.` }))
      } catch (err) {
        return html(await renderKeys(s, q, { kind: 'error', text: problem(err) }), 400)
      }
    })

  return new Elysia({ name: 'console-pages' })
    .get(
      '/console/',
      guarded(async (s, query) => {
        const q = scopeOf(query)
        return overviewPage(await frameFor(s, 'Overview', '/console/', q), await deps.reads.overview(q))
      }),
    )
    .get(
      '/console/verifications',
      guarded(async (s, query) => {
        const q = scopeOf(query)
        const form: SearchForm = { id: str(query.id), recipient: '', country: str(query.country).toUpperCase(), status: str(query.status) }
        const keep: Record<string, string> = {}
        for (const k of ['id', 'country', 'status'] as const) if (form[k]) keep[k] = form[k]
        const frame = await frameFor(s, 'Verifications', '/console/verifications', q, { keep })
        try {
          const rows = await deps.reads.searchVerifications({
            ...q,
            id: form.id || undefined,
            recipient: str(query.recipient) || undefined,
            country: form.country || undefined,
            status: form.status || undefined,
          })
          return verificationsPage(frame, form, rows)
        } catch (err) {
          return html(verificationsPage(frame, form, [], problem(err)), 400)
        }
      }),
    )
    .get(
      '/console/verifications/:id',
      guarded(async (s, query, params) => {
        const q = scopeOf(query)
        const v = await deps.reads.verification(String(params.id))
        if (!v)
          return html(
            verificationsPage(
              await frameFor(s, 'Verifications', '/console/verifications', q),
              { id: String(params.id), recipient: '', country: '', status: '' },
              [],
              'No verification has this id.',
            ),
            404,
          )
        return verificationPage(await frameFor(s, `Verification`, '/console/verifications', q), v)
      }),
    )
    .get(
      '/console/fraud',
      guarded(async (s, query) => renderFraud(s, scopeOf(query))),
    )
    .get(
      '/console/keys',
      guarded(async (s, query) => renderKeys(s, scopeOf(query))),
    )
    .get(
      '/console/webhooks',
      guarded(async (s, query) => renderWebhooks(s, scopeOf(query))),
    )
    .get(
      '/console/system',
      guarded(async (s, query) => systemPage(await frameFor(s, 'System', '/console/system', scopeOf(query)), await deps.reads.system())),
    )
    .get(
      '/console/audit',
      guarded(async (s, query) => {
        const q = scopeOf(query)
        return auditPage(await frameFor(s, 'Audit log', '/console/audit', q), await deps.reads.audit(q))
      }),
    )
    .post(
      '/console/keys',
      action(async (s, form) => {
        const q = { account: form.account || undefined, period: '24h' as Period }
        try {
          const k = await deps.actionsAs(s.operator).admin.createKey({ name: form.name, account: form.account || undefined })
          return html(await renderKeys(s, q, { kind: 'ok', text: `Key ${k.prefix} created for ${k.account}.` }, k))
        } catch (err) {
          return html(await renderKeys(s, q, { kind: 'error', text: problem(err) }), 400)
        }
      }),
    )
    .post('/console/keys/:id/disable', keyAction('disabled', 'disabled'))
    .post('/console/keys/:id/enable', keyAction('active', 'enabled'))
    .post('/console/keys/:id/revoke', keyAction('revoked', 'revoked'))
    .post(
      '/console/credits',
      action(async (s, form) => {
        const q = { account: form.account || undefined, period: '24h' as Period }
        const amount = /^\d+$/.test(form.amount ?? '') ? Number(form.amount) : Number.NaN
        try {
          const a = deps.actionsAs(s.operator).admin
          const r =
            form.op === 'deduct'
              ? await a.deductCredits(amount, { account: form.account, note: form.note })
              : await a.addCredits(amount, form.account, form.note)
          const verb = form.op === 'deduct' ? 'Deducted' : 'Added'
          return html(await renderKeys(s, q, { kind: 'ok', text: `${verb} ${amount} credits: ${r.account} now has ${r.balance}.` }))
        } catch (err) {
          return html(await renderKeys(s, q, { kind: 'error', text: problem(err) }), 400)
        }
      }),
    )
    .post(
      '/console/accounts/settings',
      action(async (s, form) => {
        const account = form.account || DEFAULT_ACCOUNT
        const q = { account, period: '24h' as Period }
        try {
          const countries = form.countries
            ? form.countries
                .split(',')
                .map((c) => c.trim().toUpperCase())
                .filter(Boolean)
            : null
          const cap = form.daily_credit_limit ? (/^\d+$/.test(form.daily_credit_limit) ? Number(form.daily_credit_limit) : Number.NaN) : null
          if (Number.isNaN(cap))
            return html(await renderKeys(s, q, { kind: 'error', text: 'The daily credit cap must be a whole number, or empty for none.' }), 400)
          await deps
            .actionsAs(s.operator)
            .fraud.setAccount(account, { allowedCountries: countries, dailyCreditLimit: cap, testRecipients: form.test_recipients !== 'off' })
          return html(await renderKeys(s, q, { kind: 'ok', text: `Settings of ${account} saved.` }))
        } catch (err) {
          return html(await renderKeys(s, q, { kind: 'error', text: problem(err) }), 400)
        }
      }),
    )
    .post(
      '/console/fraud/unblock',
      action(async (s, form) => {
        const q = { account: undefined, period: '24h' as Period }
        try {
          const r = await deps.actionsAs(s.operator).fraud.unblock(form.scope ?? '', form.account || DEFAULT_ACCOUNT)
          const text = r.wasBlocked
            ? `Unblocked ${r.kind} ${r.scope} for ${r.account}.`
            : `${r.kind} ${r.scope} of ${r.account} was not blocked; its count starts again from now.`
          return html(await renderFraud(s, q, { kind: 'ok', text }))
        } catch (err) {
          return html(await renderFraud(s, q, { kind: 'error', text: problem(err) }), 400)
        }
      }),
    )
    .post(
      '/console/events/:id/replay',
      action(async (s, _form, params) => {
        const q = { account: undefined, period: '24h' as Period }
        try {
          const r = await deps.actionsAs(s.operator).webhooks.replay(String(params.id))
          return html(
            await renderWebhooks(s, q, { kind: 'ok', text: `Event ${r.event.id} queued again for ${r.deliveries} endpoint${r.deliveries === 1 ? '' : 's'}.` }),
          )
        } catch (err) {
          return html(await renderWebhooks(s, q, { kind: 'error', text: problem(err) }), 400)
        }
      }),
    )
}
