/**
 * The search by recipient (docs/console.md#verifications): POST
 * /console/api/verifications/search, behind the session gate. A POST keeps
 * the number or address out of every URL (the browser's history, a reverse
 * proxy's access log); a viewer may make it (session-gate.ts READS_BY_POST).
 * The body takes the GET's parameters as JSON fields; the answer is the GET's.
 */
import { Elysia } from 'elysia'
import { errorReply, respond } from '../http/reply.ts'
import type { Logger } from '../lib/logger.ts'
import { consoleMask } from '../lib/mask.ts'
import type { ConsoleSearch, RefusalView } from '../otp/console-search.ts'
import type { VerificationStatus } from '../otp/ports/index.ts'
import { checkQuery, LIMIT_INVALID, limitOf, SearchQuery } from './read-queries.ts'
import { type SessionGateDeps, sessionGate } from './session-gate.ts'
import { iso, verificationView } from './views.ts'

export const SEARCH_PATH = '/console/api/verifications/search'

export interface SearchRouteDeps extends SessionGateDeps {
  search: ConsoleSearch
  logger: Logger
}

/** The body's fields as the GET's parameters (`limit` a number in JSON, text in a form). */
function asParameters(input: Record<string, unknown>): Record<string, string | undefined> | string {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(input)) {
    if (typeof v === 'number' && Number.isInteger(v)) out[k] = String(v)
    else if (typeof v === 'string') out[k] = v
    else return `field '${k}' must be ${k === 'limit' ? 'a whole number' : 'text'}`
  }
  return out
}

/** A refused send as the search shows it: its `send.blocked` event's facts, the recipient in the console's mask. */
export function refusalView(x: RefusalView): Record<string, unknown> {
  const data = (JSON.parse(x.send.body) as { data?: Record<string, unknown> }).data ?? {}
  return {
    event_id: x.send.id,
    account: x.account,
    occurred_at: iso(x.send.occurredAt),
    channel: data.channel ?? null,
    recipient: typeof data.recipient === 'string' ? consoleMask(data.recipient) : null,
    rule: data.rule ?? null,
    country: data.country ?? null,
  }
}

export function searchRoutes(deps: SearchRouteDeps) {
  return new Elysia({ name: 'console-search-routes' }).use(sessionGate(deps)).post(SEARCH_PATH, ({ request, input, actor }) =>
    respond(deps.logger, request, 'Internal server error', async () => {
      const fields = asParameters(input)
      if (typeof fields === 'string') return errorReply(400, fields)
      const q = checkQuery(SearchQuery, fields)
      if (!q.ok) return errorReply(400, q.error.replace(/query parameter/, 'field'))
      const limit = limitOf(q.value.limit)
      if (limit === null) return errorReply(400, LIMIT_INVALID.replace(/query parameter/, 'field'))
      const status = q.value.status as VerificationStatus | undefined
      const out = await deps.search.verifications({ ...q.value, period: q.value.period ?? '24h', status, limit }, actor)
      if (!out.ok) return errorReply(out.status, out.error, out.retryAfter)
      const { value } = out
      const refusals = (value.refusals ?? []).map(refusalView)
      return { status: 200, body: { from: iso(value.from), to: iso(value.to), verifications: value.rows.map(verificationView), next: value.next, refusals } }
    }),
  )
}
