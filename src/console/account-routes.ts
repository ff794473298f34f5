/**
 * Accounts and credits in the console (docs/console.md#the-json-api): each
 * account with its balance and settings; a settings change (countries,
 * daily credit cap, test recipients, code length); credits added or
 * deducted with a note; the ledger. The CLI's use cases (otp/admin.ts,
 * otp/fraud-admin.ts), acting as the signed-in operator.
 */
import { Elysia } from 'elysia'
import type { Config } from '../config/schema.ts'
import type { Logger } from '../lib/logger.ts'
import type { Admin } from '../otp/admin.ts'
import type { Actor } from '../otp/audit.ts'
import type { FraudAdmin } from '../otp/fraud-admin.ts'
import { act, BadRequest, checked, fromForm } from './act.ts'
import { consoleGuard, type ConsoleGuardDeps } from './guard.ts'
import { API_PATH } from './http.ts'
import { AccountSettingsBody, CreditsBody } from './models.ts'
import { bodyCheck } from './validate.ts'
import { accountView, ledgerView } from './views.ts'

export interface AccountRouteDeps extends ConsoleGuardDeps {
  admin: Admin
  fraud: FraudAdmin
  logger: Logger
  config(): Config
}

const checkSettings = bodyCheck(AccountSettingsBody)
const checkCredits = bodyCheck(CreditsBody)
const LEDGER_MAX = 1000

export const ACCOUNT_PATHS = {
  [`${API_PATH}/accounts`]: ['GET'],
  [`${API_PATH}/accounts/:name`]: ['GET', 'PATCH'],
  [`${API_PATH}/accounts/:name/credits/add`]: ['POST'],
  [`${API_PATH}/accounts/:name/credits/deduct`]: ['POST'],
  [`${API_PATH}/accounts/:name/ledger`]: ['GET'],
}

function limitOf(raw: unknown): number {
  if (raw === undefined || raw === '') return 50
  const n = typeof raw === 'string' && /^[0-9]{1,4}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(n >= 1 && n <= LEDGER_MAX)) throw new BadRequest(`limit must be a whole number from 1 to ${LEDGER_MAX}`)
  return n
}

export function accountRoutes(deps: AccountRouteDeps) {
  const view = async (name: string) => accountView(await deps.admin.account(name), await deps.fraud.account(name), deps.config())
  const changeSettings = ({
    request,
    params,
    input,
    form,
    actor,
  }: {
    request: Request
    params: { name: string }
    input: Record<string, unknown>
    form: boolean
    actor: Actor
  }) =>
    act(deps.logger, request, async () => {
      const { value } = checked(checkSettings, fromForm(AccountSettingsBody, input, form))
      if (Object.keys(value).length === 0) throw new BadRequest('nothing to change: give countries, daily_credit_limit, test_recipients or code_length')
      if (value.code_length !== undefined) await deps.admin.as(actor).setCodeLength(params.name, value.code_length)
      const guard = {
        ...(value.countries === undefined ? {} : { allowedCountries: value.countries }),
        ...(value.daily_credit_limit === undefined ? {} : { dailyCreditLimit: value.daily_credit_limit }),
        ...(value.test_recipients === undefined ? {} : { testRecipients: value.test_recipients }),
      }
      if (Object.keys(guard).length > 0) await deps.fraud.as(actor).setAccount(params.name, guard)
      return { status: 200, body: { account: await view(params.name) } }
    })
  return new Elysia({ name: 'console-account-routes' })
    .use(consoleGuard(deps))
    .get(`${API_PATH}/accounts`, ({ request }) =>
      act(deps.logger, request, async () => {
        const accounts = await deps.admin.listAccounts()
        const out = []
        for (const a of accounts) out.push(accountView(a, await deps.fraud.account(a.name), deps.config()))
        return { status: 200, body: { accounts: out } }
      }),
    )
    .get(`${API_PATH}/accounts/:name`, ({ request, params }) =>
      act(deps.logger, request, async () => ({ status: 200, body: { account: await view(params.name) } })),
    )
    .patch(`${API_PATH}/accounts/:name`, changeSettings)
    .post(`${API_PATH}/accounts/:name/credits/add`, ({ request, params, input, form, actor }) =>
      act(deps.logger, request, async () => {
        const { value } = checked(checkCredits, fromForm(CreditsBody, input, form))
        const r = await deps.admin.as(actor).addCredits(value.amount, params.name, value.note || undefined)
        return { status: 200, body: r }
      }),
    )
    .post(`${API_PATH}/accounts/:name/credits/deduct`, ({ request, params, input, form, actor }) =>
      act(deps.logger, request, async () => {
        const { value } = checked(checkCredits, fromForm(CreditsBody, input, form))
        const r = await deps.admin.as(actor).deductCredits(value.amount, { account: params.name, note: value.note || undefined })
        return { status: 200, body: r }
      }),
    )
    .get(`${API_PATH}/accounts/:name/ledger`, ({ request, params, query }) =>
      act(deps.logger, request, async () => {
        const h = await deps.admin.history(params.name, limitOf(query.limit))
        const a = await deps.admin.account(params.name)
        return { status: 200, body: { account: h.account, balance: a.balance, entries: h.entries.map(ledgerView) } }
      }),
    )
}
