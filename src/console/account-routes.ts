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
import { sessionGate, type SessionGateDeps } from './session-gate.ts'
import { API_PATH } from './http.ts'
import { AccountSettingsBody, CreditsBody } from './models.ts'
import { bodyCheck } from './validate.ts'
import { accountView, ledgerView } from './views.ts'
import { errors, type Json } from '../http/openapi-parts.ts'
import { ACCOUNT_EXAMPLE, accountNotFound, accountParam, AT, signedInOperation, invalidField, queryParam, sentence } from './openapi.ts'

export interface AccountRouteDeps extends SessionGateDeps {
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
    .use(sessionGate(deps))
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

/** The routes' operations in the OpenAPI document (app/openapi.ts assembles them). */
export const accountOperations: Record<string, Json> = {
  '/console/api/accounts': {
    get: signedInOperation({
      id: 'consoleListAccounts',
      summary: 'Accounts with balance and settings',
      state: false,
      ok: [200, 'The accounts', 'ConsoleAccountsResponse', { accounts: [ACCOUNT_EXAMPLE] }],
    }),
  },
  '/console/api/accounts/{account}': {
    get: signedInOperation({
      id: 'consoleAccount',
      summary: 'One account with balance and settings',
      state: false,
      params: [accountParam],
      ok: [200, 'The account', 'ConsoleAccountResponse', { account: ACCOUNT_EXAMPLE }],
      more: accountNotFound,
    }),
    patch: signedInOperation({
      id: 'consoleChangeAccount',
      summary: "Change an account's settings: countries, daily credit cap, test recipients, code length",
      state: true,
      params: [accountParam],
      body: ['ConsoleAccountSettingsBody', { countries: ['US', 'CA'], daily_credit_limit: 5000 }],
      ok: [
        200,
        'The account after the change',
        'ConsoleAccountResponse',
        { account: { ...ACCOUNT_EXAMPLE, countries: ['US', 'CA'], countries_are_default: false, daily_credit_limit: 5000 } },
      ],
      more: {
        ...invalidField('unknown country code XX: use ISO 3166-1 alpha-2 codes'),
        ...accountNotFound,
      },
    }),
  },
  '/console/api/accounts/{account}/credits/add': {
    post: signedInOperation({
      id: 'consoleAddCredits',
      summary: 'Add credits, with a note kept in the ledger and the audit log',
      state: true,
      params: [accountParam],
      body: ['ConsoleCreditsBody', { amount: 1000, note: 'invoice 42' }],
      ok: [200, 'The new balance', 'ConsoleCreditsResult', { account: 'default', balance: 1950 }],
      more: {
        ...invalidField('amount must be a whole number from 1 to 1000000000'),
        ...accountNotFound,
      },
    }),
  },
  '/console/api/accounts/{account}/credits/deduct': {
    post: signedInOperation({
      id: 'consoleDeductCredits',
      summary: 'Deduct credits (a correction), never below zero',
      state: true,
      params: [accountParam],
      body: ['ConsoleCreditsBody', { amount: 5, note: 'double grant' }],
      ok: [200, 'The new balance', 'ConsoleCreditsResult', { account: 'default', balance: 945 }],
      more: {
        ...invalidField('amount must be a whole number from 1 to 1000000000'),
        ...accountNotFound,
        '409': errors('The balance does not cover it: nothing changed', [sentence("cannot deduct 5 credits: account 'default' has only 3")]),
      },
    }),
  },
  '/console/api/accounts/{account}/ledger': {
    get: signedInOperation({
      id: 'consoleLedger',
      summary: "An account's ledger, newest first",
      state: false,
      params: [accountParam, queryParam('limit', 'at most this many entries (1-1000, default 50)', { type: 'integer', minimum: 1, maximum: 1000 }, 50)],
      ok: [
        200,
        'The ledger',
        'ConsoleLedgerResponse',
        { account: 'default', balance: 945, entries: [{ id: 7, created_at: AT, kind: 'grant', amount: 1000, verification_id: null, note: 'invoice 42' }] },
      ],
      more: {
        '400': errors('A bad limit', [sentence('limit must be a whole number from 1 to 1000')]),
        ...accountNotFound,
      },
    }),
  },
}
