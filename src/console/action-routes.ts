/**
 * The console's other actions and the audit log (docs/console.md#the-json-api):
 * lift a fraud guard block, send an event again, read the audit log. The
 * CLI's use cases (otp/fraud-admin.ts, otp/webhooks.ts, otp/audit.ts),
 * acting as the signed-in operator.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import { AUDIT_ACTIONS, AUDIT_PAGE_MAX, listAudit } from '../otp/audit.ts'
import type { FraudAdmin } from '../otp/fraud-admin.ts'
import type { Storage } from '../otp/ports/index.ts'
import type { Webhooks } from '../otp/webhooks.ts'
import { act, BadRequest, checked, fromForm } from './act.ts'
import { sessionGate, type SessionGateDeps } from './session-gate.ts'
import { API_PATH } from './http.ts'
import { UnblockBody } from './models.ts'
import { bodyCheck } from './validate.ts'
import { auditView } from './views.ts'
import { errors, type Json } from '../http/openapi-parts.ts'
import { accountNotFound, AT, signedInOperation, invalidField, notFoundAs, pathParam, queryParam, sentence } from './openapi.ts'

export interface ActionRouteDeps extends SessionGateDeps {
  fraud: FraudAdmin
  webhooks: Webhooks
  storage: Storage
  logger: Logger
}

const checkUnblock = bodyCheck(UnblockBody)

export const ACTION_PATHS = {
  [`${API_PATH}/fraud/unblock`]: ['POST'],
  [`${API_PATH}/events/:id/replay`]: ['POST'],
  [`${API_PATH}/audit`]: ['GET'],
}

/** An ISO 8601 time, or a whole number of ms since the epoch. */
function timeParam(name: string, raw: unknown): number | undefined {
  if (raw === undefined || raw === '') return undefined
  const s = String(raw)
  const at = /^[0-9]{1,15}$/.test(s) ? Number(s) : /^[0-9]{4}-[0-9]{2}-[0-9]{2}/.test(s) ? Date.parse(s) : Number.NaN
  if (Number.isNaN(at)) throw new BadRequest(`${name} must be an ISO 8601 time (2026-01-31T12:00:00Z) or milliseconds since the epoch`)
  return at
}

function intParam(name: string, raw: unknown, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined
  const s = String(raw)
  if (!/^[0-9]{1,16}$/.test(s) || Number(s) < 1 || Number(s) > max) throw new BadRequest(`${name} must be a whole number from 1 to ${max}`)
  return Number(s)
}

const text = (raw: unknown) => (typeof raw === 'string' && raw !== '' ? raw : undefined)

export function actionRoutes(deps: ActionRouteDeps) {
  return new Elysia({ name: 'console-action-routes' })
    .use(sessionGate(deps))
    .post(`${API_PATH}/fraud/unblock`, ({ request, input, form, actor }) =>
      act(deps.logger, request, async () => {
        const { value } = checked(checkUnblock, fromForm(UnblockBody, input, form))
        const r = await deps.fraud.as(actor).unblock(value.scope, value.account)
        return { status: 200, body: { account: r.account, scope_kind: r.kind, scope: r.scope, was_blocked: r.wasBlocked } }
      }),
    )
    .post(`${API_PATH}/events/:id/replay`, ({ request, params, actor }) =>
      act(deps.logger, request, async () => {
        const r = await deps.webhooks.as(actor).replay(params.id)
        return { status: 200, body: { id: r.event.id, type: r.event.type, deliveries: r.deliveries } }
      }),
    )
    .get(`${API_PATH}/audit`, ({ request, query }) =>
      act(deps.logger, request, async () => {
        const limit = intParam('limit', query.limit, AUDIT_PAGE_MAX) ?? 100
        const rows = await listAudit(deps.storage, {
          since: timeParam('since', query.since),
          until: timeParam('until', query.until),
          action: text(query.action),
          operator: text(query.operator),
          beforeId: intParam('before_id', query.before_id, Number.MAX_SAFE_INTEGER),
          limit,
        })
        // The next page: entries older than the last one shown.
        const next = rows.length === limit ? rows.at(-1)!.id : null
        return { status: 200, body: { entries: rows.map(auditView), next_before_id: next } }
      }),
    )
}

/** The routes' operations in the OpenAPI document (app/openapi.ts assembles them). */
export const actionOperations: Record<string, Json> = {
  '/console/api/fraud/unblock': {
    post: signedInOperation({
      id: 'consoleUnblock',
      summary: 'Lift a fraud guard block of a country or prefix, reset its escalation, count its conversion from now',
      state: true,
      body: ['ConsoleUnblockBody', { scope: 'UZ', account: 'default' }],
      ok: [
        200,
        'Unblocked (was_blocked: whether a block was in force)',
        'ConsoleUnblockResult',
        { account: 'default', scope_kind: 'country', scope: 'UZ', was_blocked: true },
      ],
      more: {
        ...invalidField("'UZZ' is not a scope: give a country code (UZ) or a prefix (+99890123)"),
        ...accountNotFound,
      },
    }),
  },
  '/console/api/events/{event_id}/replay': {
    post: signedInOperation({
      id: 'consoleReplayEvent',
      summary: 'Send an event again (same id and body) to the endpoints subscribed to it',
      state: true,
      params: [pathParam('event_id', 'the event id', '0b6c3c52-5a0e-4a43-9d87-2f1f6f0f5b0e')],
      ok: [
        200,
        'Rearmed; deliveries: how many endpoints get it',
        'ConsoleReplayResult',
        { id: '0b6c3c52-5a0e-4a43-9d87-2f1f6f0f5b0e', type: 'verification.approved', deliveries: 1 },
      ],
      more: notFoundAs('event', "no event has id 'x' (see: otpd events list)"),
    }),
  },
  '/console/api/audit': {
    get: signedInOperation({
      id: 'consoleAudit',
      summary: 'The audit log, newest first',
      state: false,
      params: [
        queryParam('since', 'at or after: ISO 8601, or ms since the epoch', { type: 'string' }, '2026-01-01T00:00:00Z'),
        queryParam('until', 'before: ISO 8601, or ms since the epoch', { type: 'string' }, '2026-01-02T00:00:00Z'),
        queryParam('action', 'only this action', { type: 'string', enum: [...AUDIT_ACTIONS] }, 'credits.added'),
        queryParam('operator', 'only this operator (or CLI user)', { type: 'string' }, 'alice'),
        queryParam('before_id', 'entries older than this id (the next page)', { type: 'integer', minimum: 1 }, 120),
        queryParam('limit', `at most this many (1-${AUDIT_PAGE_MAX}, default 100)`, { type: 'integer', minimum: 1, maximum: AUDIT_PAGE_MAX }, 100),
      ],
      ok: [
        200,
        'Entries',
        'ConsoleAuditResponse',
        {
          entries: [
            {
              id: 120,
              at: AT,
              operator: 'alice',
              source: 'console',
              action: 'credits.added',
              subject: 'account default',
              details: { amount: 1000, note: 'invoice 42', balance: 1950 },
            },
          ],
          next_before_id: null,
        },
      ],
      more: { '400': errors('A bad filter', [sentence("unknown audit action 'x'; known actions: ...")]) },
    }),
  },
}
