/**
 * The query strings of the console's read endpoints (docs/console.md#read-endpoints):
 * TypeBox schemas, which the routes check and the OpenAPI document
 * publishes (read-openapi.ts), and the one check that turns a bad query into
 * a 400 naming the parameter.
 */
import { type Static, type TObject, Type as T } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

const Period = T.Union([T.Literal('1h'), T.Literal('24h'), T.Literal('7d'), T.Literal('30d')], {
  description:
    'The period, in whole buckets, the current one included: 60 minutes, 24 hours, 28 quarter days (UTC 00, 06, 12, 18) or 30 UTC days. Default 24h.',
})
const Account = T.String({ minLength: 1, maxLength: 64, description: 'An account name; every account when absent.' })
const Limit = T.String({ pattern: '^[0-9]{1,3}$', description: 'Rows per page, 1-200 (default 50).' })

export const PeriodQuery = T.Object({ period: T.Optional(Period), account: T.Optional(Account) }, { additionalProperties: false })
export type PeriodQuery = Static<typeof PeriodQuery>

export const VerificationStatusParam = T.Union(
  ['pending', 'approved', 'expired', 'locked', 'canceled', 'failed'].map((s) => T.Literal(s)),
  { description: 'The status now (docs/api.md#verification-status), without the recipient-wide failure cap.' },
)

export const SearchQuery = T.Object(
  {
    period: T.Optional(Period),
    account: T.Optional(Account),
    id: T.Optional(T.String({ minLength: 1, maxLength: 64, description: 'A verification id.' })),
    recipient: T.Optional(
      T.String({ minLength: 3, maxLength: 320, description: 'A full number (E.164; spaces and dashes allowed) or email address, hashed as otpd stores it.' }),
    ),
    country: T.Optional(T.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 (ZZ: no known country).' })),
    status: T.Optional(VerificationStatusParam),
    cursor: T.Optional(T.String({ maxLength: 40, description: "The previous page's `next`." })),
    limit: T.Optional(Limit),
  },
  { additionalProperties: false },
)
export type SearchQuery = Static<typeof SearchQuery>

export const WebhooksQuery = T.Object(
  {
    period: T.Optional(Period),
    account: T.Optional(Account),
    status: T.Optional(T.Union([T.Literal('pending'), T.Literal('delivered'), T.Literal('failed')])),
    cursor: T.Optional(T.String({ pattern: '^[0-9]{1,16}$', description: "The previous page's `next`." })),
    limit: T.Optional(Limit),
  },
  { additionalProperties: false },
)
export type WebhooksQuery = Static<typeof WebhooksQuery>

export const EmptyQuery = T.Object({}, { additionalProperties: false })

/** Why `query` does not fit `schema` (one sentence naming the parameter), or the typed query. */
export function checkQuery<S extends TObject>(
  schema: S,
  query: Record<string, string | undefined>,
): { ok: true; value: Static<S> } | { ok: false; error: string } {
  const known = Object.keys(schema.properties)
  const unknown = Object.keys(query).find((k) => !known.includes(k))
  if (unknown !== undefined) return { ok: false, error: `unknown query parameter '${unknown}': use ${known.join(', ') || 'none'}` }
  const first = Value.Errors(schema, query).First()
  if (first === undefined) return { ok: true, value: query as Static<S> }
  const name = first.path.replace(/^\//, '')
  const prop = schema.properties[name] as { description?: string; anyOf?: { const: string }[] } | undefined
  const allowed = prop?.anyOf ? `one of ${prop.anyOf.map((x) => x.const).join(', ')}` : (prop?.description ?? first.message)
  return { ok: false, error: `query parameter '${name}' is not valid: ${allowed}` }
}

/** A checked `limit`, within 1-200. */
export function limitOf(limit: string | undefined): number | null {
  const n = limit === undefined ? 50 : Number(limit)
  return n >= 1 && n <= 200 ? n : null
}

export const LIMIT_INVALID = "query parameter 'limit' is not valid: rows per page, 1-200 (default 50)."

/** The query string as given, each parameter once (a repeated one is a 400). */
function queryOf(request: Request): Record<string, string> | string {
  const out: Record<string, string> = {}
  for (const [k, v] of new URL(request.url).searchParams) {
    if (k in out) return `query parameter '${k}' is given more than once`
    out[k] = v
  }
  return out
}

/** The request's query string checked against `schema` (checkQuery), or why it does not fit. */
export function checkedQuery<S extends TObject>(schema: S, request: Request) {
  const q = queryOf(request)
  return typeof q === 'string' ? ({ ok: false, error: q } as const) : checkQuery(schema, q)
}
