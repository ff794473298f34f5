/**
 * The console's other actions and the audit log (docs/console.md#the-json-api):
 * lift a fraud guard block, send an event again, read the audit log. The
 * CLI's use cases (otp/fraud-admin.ts, otp/webhooks.ts, otp/audit.ts),
 * acting as the signed-in operator.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import { AUDIT_PAGE_MAX, listAudit } from '../otp/audit.ts'
import type { FraudAdmin } from '../otp/fraud-admin.ts'
import type { Storage } from '../otp/ports/index.ts'
import type { Webhooks } from '../otp/webhooks.ts'
import { act, BadRequest, checked, fromForm } from './act.ts'
import { consoleGuard, type ConsoleGuardDeps } from './guard.ts'
import { API_PATH } from './http.ts'
import { UnblockBody } from './models.ts'
import { bodyCheck } from './validate.ts'
import { auditView } from './views.ts'

export interface ActionRouteDeps extends ConsoleGuardDeps {
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
    .use(consoleGuard(deps))
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
