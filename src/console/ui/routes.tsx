/** @jsxImportSource hono/jsx */
/**
 * The console's HTML pages and form actions under /console/, behind the
 * session gate (console/session-gate.ts: no session, the sign-in page; an action
 * without the CSRF token, 403 before anything changes). Each page reads
 * through the same functions as the JSON read endpoints (ui/reads.ts); each
 * action calls the same audited use cases as the CLI, as the signed-in
 * operator. Refused input re-renders the page with the reason (4xx).
 */
import { Elysia } from 'elysia'
import { type Admin, DEFAULT_ACCOUNT } from '../../otp/admin.ts'
import type { Actor } from '../../otp/audit.ts'
import type { FraudAdmin } from '../../otp/fraud-admin.ts'
import { OperatorError } from '../../otp/operator-error.ts'
import type { ConsoleSession } from '../../otp/operators.ts'
import type { Webhooks } from '../../otp/webhooks.ts'
import { type SessionGateDeps, sessionGate } from '../session-gate.ts'
import { htmlResponse } from '../pages.ts'
import { RECIPIENT_IN_URL } from '../read-routes.ts'
import { type PageFrame, PERIODS, type Period, page } from './layout.tsx'
import { auditPage } from './pages/audit.tsx'
import { fraudPage } from './pages/fraud.tsx'
import { type KeysView, keysPage } from './pages/keys.tsx'
import { overviewPage } from './pages/overview.tsx'
import { systemPage } from './pages/system.tsx'
import { type SearchForm, verificationPage, verificationsPage } from './pages/verifications.tsx'
import { webhooksPage } from './pages/webhooks.tsx'
import { workflowsPage } from './pages/workflows.tsx'
import { LIST_PAGE, PERIOD_MS, type PageReads, pageAfter, pageOf, Refused, type ScopeQuery } from './reads.ts'

export interface ConsolePagesDeps extends SessionGateDeps {
  admin: Admin
  fraud: FraudAdmin
  webhooks: Webhooks
  reads: PageReads
  now(): number
}

type Query = Record<string, string | undefined>
/** Where each list of the keys page starts (docs/console.md#lists). */
interface KeysCursors {
  ledgerBefore?: number
  keysAfter?: number
  accountsAfter?: number
}
type Flash = PageFrame['flash']
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '')
/** A form field of the guard's `input`, trimmed ('' when absent). */
const field = (input: object, name: string): string => str((input as Record<string, unknown>)[name])

function scopeOf(query: Query): ScopeQuery {
  const period = (PERIODS as readonly string[]).includes(query.period ?? '') ? (query.period as Period) : '24h'
  return { account: query.account?.trim() || undefined, period }
}

/** A page's cursor in the query (a row's id): a number, else the first page. */
const cursorOf = (v: string | undefined): number | undefined => (v !== undefined && /^[0-9]{1,15}$/.test(v) ? Number(v) : undefined)

/** The operator's refusal in words; anything else is a fault (the caller's 500). */
function refusal(err: unknown): { status: number; text: string } {
  if (err instanceof Refused) return { status: err.status, text: err.message }
  if (err instanceof OperatorError) return { status: 400, text: err.message }
  throw err
}

/** The pages' app, behind the console's session gate. */
type PagesApp = ReturnType<typeof pagesApp>
const pagesApp = (deps: ConsolePagesDeps) => new Elysia({ name: 'console-pages' }).use(sessionGate(deps))
type PageKit = ReturnType<typeof pageKit>
const DAY_SCOPE = (account?: string): ScopeQuery => ({ account, period: '24h' })

export function consolePages(deps: ConsolePagesDeps) {
  const kit = pageKit(deps)
  const app = pagesApp(deps)
  readPages(app, deps, kit)
  keyActions(app, kit)
  guardAndEventActions(app, kit)
  return app
}

/** Renders a page; a refusal while reading shows the frame with the reason. */
function pageRenderer(deps: ConsolePagesDeps) {
  const frameFor = async (s: ConsoleSession, title: string, path: string, q: ScopeQuery, extra: Partial<PageFrame> = {}): Promise<PageFrame> => {
    const accounts = (await deps.admin.listAccounts()).map((a) => a.name)
    // A viewer sees that it reads only (docs/console.md#roles): its changes answer 403.
    const operator = s.role === 'viewer' ? `${s.operator} (viewer: reads only)` : s.operator
    return { title, path, operator, csrf: s.csrf, scope: { account: q.account, period: q.period, accounts }, ...extra }
  }
  return async (s: ConsoleSession, title: string, path: string, q: ScopeQuery, body: (f: PageFrame) => Promise<string>, flash?: Flash, status = 200) => {
    const frame = await frameFor(s, title, path, q, { flash })
    try {
      return htmlResponse(await body(frame), status)
    } catch (err) {
      const r = refusal(err)
      return htmlResponse(page({ ...frame, flash: { kind: 'error', text: r.text } }, null), r.status)
    }
  }
}

/** The pages the actions answer with, and how an action runs as the operator. */
function pageKit(deps: ConsolePagesDeps) {
  const render = pageRenderer(deps)
  const keysView = async (q: ScopeQuery, created?: KeysView['created'], cursors: KeysCursors = {}): Promise<KeysView> => {
    const { ledgerBefore } = cursors
    const account = q.account ?? DEFAULT_ACCOUNT
    const [accounts, keys, history, settings] = await Promise.all([
      deps.admin.listAccounts(),
      deps.admin.listKeys(q.account),
      deps.admin.history(account, LIST_PAGE + 1, ledgerBefore),
      deps.fraud.account(account),
    ])
    const since = deps.now() - PERIOD_MS[q.period]
    const ledger = pageOf(
      history.entries.filter((e) => e.createdAt >= since),
      (e) => e.id,
    )
    return {
      accounts,
      keyPage: pageAfter(keys, cursors.keysAfter),
      accountPage: pageAfter(accounts, cursors.accountsAfter),
      later: { keys: cursors.keysAfter !== undefined, accounts: cursors.accountsAfter !== undefined, ledger: ledgerBefore !== undefined },
      account,
      ledger: ledger.rows,
      ledgerNext: ledger.next,
      settings,
      created,
      now: deps.now(),
    }
  }
  return {
    render,
    keys: (s: ConsoleSession, q: ScopeQuery, flash?: Flash, status = 200, created?: KeysView['created'], cursors?: KeysCursors) =>
      render(s, 'Keys and accounts', '/console/keys', q, async (f) => keysPage(f, await keysView(q, created, cursors)), flash, status),
    webhooks: (s: ConsoleSession, q: ScopeQuery, flash?: Flash, status = 200, cursors: { before?: number; endpointsAfter?: number } = {}) =>
      render(s, 'Webhooks', '/console/webhooks', q, async (f) => webhooksPage(f, await deps.reads.webhooks(q, cursors)), flash, status),
    fraud: (s: ConsoleSession, q: ScopeQuery, flash?: Flash, status = 200) =>
      render(s, 'Fraud guard', '/console/fraud', q, async (f) => fraudPage(f, await deps.reads.fraud(q)), flash, status),
    /** Runs an action as the operator: its page with what happened, or with the refusal. */
    act: async (run: () => Promise<string>, show: (flash: Flash, status: number) => Promise<Response>) => {
      try {
        return await show({ kind: 'ok', text: await run() }, 200)
      } catch (err) {
        const r = refusal(err)
        return show({ kind: 'error', text: r.text }, r.status)
      }
    },
    asOperator: (actor: Actor) => ({ admin: deps.admin.as(actor), fraud: deps.fraud.as(actor), webhooks: deps.webhooks.as(actor) }),
  }
}

/** The pages: overview, verifications, workflows, fraud, keys, webhooks, system, audit. */
function readPages(app: PagesApp, deps: ConsolePagesDeps, kit: PageKit): void {
  const { render } = kit
  app
    .get('/console/', ({ operator, query }) => {
      const q = scopeOf(query)
      return render(operator, 'Overview', '/console/', q, async (f) => overviewPage(f, await deps.reads.overview(q)))
    })
    .get('/console/verifications', ({ operator, actor, query }) => verificationsOf(deps, render, operator, actor, query, false))
    // The search form posts, so a number or address never lands in a URL (docs/console.md#verifications).
    .post('/console/verifications', ({ operator, actor, input }) =>
      verificationsOf(deps, render, operator, actor, Object.fromEntries(Object.entries(input).map(([k, v]) => [k, str(v)])), true),
    )
    .get('/console/verifications/:id', ({ operator, query, params }) =>
      render(operator, 'Verification', '/console/verifications', scopeOf(query), async (f) =>
        verificationPage(f, await deps.reads.verification(String(params.id))),
      ),
    )
    .get('/console/workflows', ({ operator, query }) => {
      const q = scopeOf(query)
      return render(operator, 'Workflows', '/console/workflows', q, async (f) => workflowsPage(f, await deps.reads.workflows(q)))
    })
    .get('/console/fraud', ({ operator, query }) => kit.fraud(operator, scopeOf(query)))
    .get('/console/keys', ({ operator, query }) =>
      kit.keys(operator, scopeOf(query), undefined, 200, undefined, {
        ledgerBefore: cursorOf(query.ledger_before),
        keysAfter: cursorOf(query.keys_after),
        accountsAfter: cursorOf(query.accounts_after),
      }),
    )
    .get('/console/webhooks', ({ operator, query }) =>
      kit.webhooks(operator, scopeOf(query), undefined, 200, { before: cursorOf(query.before), endpointsAfter: cursorOf(query.endpoints_after) }),
    )
    .get('/console/system', ({ operator, query }) =>
      render(operator, 'System', '/console/system', scopeOf(query), async (f) => systemPage(f, await deps.reads.system())),
    )
    .get('/console/audit', ({ operator, query }) => {
      const q = scopeOf(query)
      const before = cursorOf(query.before)
      return render(operator, 'Audit log', '/console/audit', q, async (f) => auditPage(f, await deps.reads.audit(q, deps.now(), before), before !== undefined))
    })
}

/** The search page: the form as given (posted, when it names a recipient), and a refused search shown under it. */
function verificationsOf(deps: ConsolePagesDeps, render: PageKit['render'], operator: ConsoleSession, actor: Actor, query: Query, posted: boolean) {
  const q = scopeOf(query)
  const form: SearchForm = { id: str(query.id), recipient: '', country: str(query.country).toUpperCase(), status: str(query.status) }
  const cursor = str(query.cursor) || undefined
  const keep: Record<string, string> = {}
  for (const k of ['id', 'country', 'status'] as const) if (form[k]) keep[k] = form[k]
  if (query.recipient !== undefined && !posted) {
    return render(operator, 'Verifications', '/console/verifications', q, async (f) => verificationsPage(f, form, [], RECIPIENT_IN_URL), undefined, 400)
  }
  return render(operator, 'Verifications', '/console/verifications', q, async (f) => {
    const search = {
      ...q,
      id: form.id || undefined,
      recipient: str(query.recipient) || undefined,
      country: form.country || undefined,
      status: form.status || undefined,
      cursor,
    }
    try {
      const found = await deps.reads.search(search, actor)
      // A recipient is never put in a URL: its search has no next-page link (docs/console.md#lists).
      const paging = { next: search.recipient ? null : found.next, later: cursor !== undefined }
      return verificationsPage({ ...f, keep }, form, found.rows, undefined, paging, search.recipient === undefined ? undefined : found.refusals)
    } catch (err) {
      return verificationsPage({ ...f, keep }, form, [], refusal(err).text)
    }
  })
}

/** The keys page's forms: create a key, change its status, credits, an account's settings. */
function keyActions(app: PagesApp, kit: PageKit): void {
  const { act, asOperator, keys } = kit
  const keyStatus =
    (status: 'active' | 'disabled' | 'revoked', verb: string) =>
    ({ operator, actor, params }: { operator: ConsoleSession; actor: Actor; params: Record<string, string> }) =>
      act(
        async () => `Key ${(await asOperator(actor).admin.setKeyStatus(String(params.id), status)).prefix} ${verb}.`,
        (flash, code) => keys(operator, DAY_SCOPE(), flash, code),
      )
  app
    .post('/console/keys', async ({ operator, actor, input }) => {
      const account = field(input, 'account') || undefined
      let created: KeysView['created']
      return act(
        async () => {
          created = await asOperator(actor).admin.createKey({ name: field(input, 'name'), account })
          return `Key ${created.prefix} created for ${created.account}.`
        },
        (flash, code) => keys(operator, DAY_SCOPE(account), flash, code, created),
      )
    })
    .post('/console/keys/:id/disable', keyStatus('disabled', 'disabled'))
    .post('/console/keys/:id/enable', keyStatus('active', 'enabled'))
    .post('/console/keys/:id/revoke', keyStatus('revoked', 'revoked'))
    .post('/console/credits', ({ operator, actor, input }) => {
      const account = field(input, 'account') || DEFAULT_ACCOUNT
      const amount = /^\d+$/.test(field(input, 'amount')) ? Number(field(input, 'amount')) : Number.NaN
      const note = field(input, 'note') || undefined
      const deduct = field(input, 'op') === 'deduct'
      return act(
        async () => {
          const a = asOperator(actor).admin
          const r = deduct ? await a.deductCredits(amount, { account, note }) : await a.addCredits(amount, account, note)
          return `${deduct ? 'Deducted' : 'Added'} ${amount} credits: ${r.account} now has ${r.balance}.`
        },
        (flash, code) => keys(operator, DAY_SCOPE(account), flash, code),
      )
    })
    .post('/console/accounts/settings', ({ operator, actor, input }) => {
      const account = field(input, 'account') || DEFAULT_ACCOUNT
      return act(
        () => saveSettings(asOperator(actor).fraud, account, input),
        (flash, code) => keys(operator, DAY_SCOPE(account), flash, code),
      )
    })
}

/** An account's settings from the keys page's form. */
async function saveSettings(fraud: FraudAdmin, account: string, input: object): Promise<string> {
  const countriesText = field(input, 'countries')
  const countries = countriesText
    ? countriesText
        .split(',')
        .map((c) => c.trim().toUpperCase())
        .filter(Boolean)
    : null
  const capText = field(input, 'daily_credit_limit')
  if (capText && !/^\d+$/.test(capText)) throw new OperatorError('The daily credit cap must be a whole number, or empty for none.')
  await fraud.setAccount(account, {
    allowedCountries: countries,
    dailyCreditLimit: capText ? Number(capText) : null,
    testRecipients: field(input, 'test_recipients') !== 'off',
  })
  return `Settings of ${account} saved.`
}

/** Lift a fraud guard block; send an event again. */
function guardAndEventActions(app: PagesApp, kit: PageKit): void {
  const { act, asOperator } = kit
  app
    .post('/console/fraud/unblock', ({ operator, actor, input }) =>
      act(
        async () => {
          const r = await asOperator(actor).fraud.unblock(field(input, 'scope'), field(input, 'account') || DEFAULT_ACCOUNT)
          return r.wasBlocked
            ? `Unblocked ${r.kind} ${r.scope} for ${r.account}.`
            : `${r.kind} ${r.scope} of ${r.account} was not blocked; its count starts again from now.`
        },
        (flash, code) => kit.fraud(operator, DAY_SCOPE(), flash, code),
      ),
    )
    .post('/console/events/:id/replay', ({ operator, actor, params }) =>
      act(
        async () => {
          const r = await asOperator(actor).webhooks.replay(String(params.id))
          return `Event ${r.event.id} queued again for ${r.deliveries} endpoint${r.deliveries === 1 ? '' : 's'}.`
        },
        (flash, code) => kit.webhooks(operator, DAY_SCOPE(), flash, code),
      ),
    )
}
