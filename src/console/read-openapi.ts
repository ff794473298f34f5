/**
 * The OpenAPI path objects of the console's read endpoints (tag `Console`),
 * for the console's document to merge: parameters from the same TypeBox
 * schemas the routes check (read-queries.ts), an example on every answer,
 * errors as the API's `ErrorResponse`. Security is the console's session
 * (`consoleSession`, a scheme the console's document declares).
 */
import type { TObject, TSchema } from '@sinclair/typebox'
import { PeriodQuery, SearchQuery, WebhooksQuery } from './read-queries.ts'

type Json = Record<string, unknown>

export const CONSOLE_TAG = {
  name: 'Console',
  description: "The operator console's JSON (admin listener only, console session required): figures, searches and actions.",
}

const error = (description: string, example: string): Json => ({
  description,
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/ErrorResponse' },
      example: { error: example, request_id: '0b7d4f3e-2c1a-4e5f-9a8b-7c6d5e4f3a2b' },
    },
  },
})

/** A query schema's properties as OpenAPI parameters (JSON of TypeBox, symbols dropped; unions of constants as enums). */
function queryParams(schema: TObject): Json[] {
  return Object.entries(schema.properties).map(([name, s]) => {
    const plain = JSON.parse(JSON.stringify(s as TSchema)) as Json & { anyOf?: { const: string }[]; description?: string }
    const out: Json = plain.anyOf ? { type: 'string', enum: plain.anyOf.map((x) => x.const) } : plain
    return { name, in: 'query', required: false, description: plain.description, schema: { ...out, description: undefined } }
  })
}

function get(operationId: string, summary: string, params: Json[], example: Json, notFound?: string): Json {
  return {
    get: {
      operationId,
      tags: [CONSOLE_TAG.name],
      summary,
      security: [{ consoleSession: [] }],
      parameters: params,
      responses: {
        '200': { description: summary, content: { 'application/json': { schema: { type: 'object' }, example } } },
        '400': error('A query parameter is not valid; `error` names it', "query parameter 'period' is not valid: one of 1h, 24h, 7d, 30d"),
        '401': error('No console session', 'Sign in to the console'),
        ...(notFound ? { '404': error('Not found', notFound) } : {}),
      },
    },
  }
}

const AT = '2026-01-01T12:00:00.000Z'
const counts = { sends: 120, accepted: 118, delivered: 110, undelivered: 3, failed: 2, approved: 96, conversion: 0.8 }

export function consoleReadPaths(): Record<string, Json> {
  const period = queryParams(PeriodQuery)
  return {
    '/console/api/overview': get(
      'consoleOverview',
      'Sends, deliveries, approvals and conversion by channel, country and provider; a time series; credits',
      period,
      {
        account: null,
        period: '24h',
        from: '2025-12-31T13:00:00.000Z',
        to: '2026-01-01T13:00:00.000Z',
        bucket_seconds: 3600,
        as_of: AT,
        totals: counts,
        by_channel: [{ channel: 'sms', ...counts }],
        by_country: [{ country: 'US', ...counts }],
        series: [{ at: AT, sends: 120, approved: 96 }],
        providers: [{ provider: 'twilio', channel: 'sms', accepted: 118, delivered: 110, undelivered: 3, delivery_rate: 0.93, failover: false }],
        failover_share: 0,
        credits: { balance: 10_000, daily_cap: 5000, spent: 118, spent_24h: 118 },
      },
      "account 'shop' does not exist",
    ),
    '/console/api/verifications': get(
      'consoleVerifications',
      'Verifications newest first, by id, recipient (hashed as stored), country, status and period; `next` continues',
      queryParams(SearchQuery),
      {
        from: '2025-12-31T13:00:00.000Z',
        to: '2026-01-01T13:00:00.000Z',
        verifications: [
          {
            verification_id: '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f',
            account: 'default',
            channel: 'sms',
            recipient: '+1415****123',
            country: 'US',
            status: 'approved',
            test: false,
            created_at: AT,
            expires_at: '2026-01-01T12:05:00.000Z',
            approved_at: '2026-01-01T12:00:40.000Z',
            failed_attempts: 0,
            locked_until: null,
            delivery: { status: 'delivered', provider: 'twilio', updated_at: '2026-01-01T12:00:03.000Z' },
            fraud_monitored: null,
          },
        ],
        next: '1767268800000.1234',
      },
    ),
    '/console/api/verifications/{verification_id}': {
      parameters: [{ name: 'verification_id', in: 'path', required: true, schema: { type: 'string' } }],
      ...get(
        'consoleVerification',
        'A verification (recipient masked) and its timeline of events',
        [],
        {
          verification: { verification_id: '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f', status: 'approved' },
          timeline: [
            { sequence: 0, type: 'created', at: AT, status: null, data: {} },
            { sequence: 1, type: 'verification.sent', at: '2026-01-01T12:00:01.000Z', status: 'pending', data: { provider: 'twilio' } },
            { sequence: 2, type: 'verification.approved', at: '2026-01-01T12:00:40.000Z', status: 'approved', data: {} },
          ],
        },
        'verification not found',
      ),
    },
    '/console/api/fraud': get(
      'consoleFraud',
      'Fraud guard: active blocks with evidence, refusals, would-be refusals (monitor), conversion by country and prefix',
      period,
      {
        account: null,
        period: '24h',
        mode: 'enforce',
        blocks: [
          {
            account: 'default',
            rule: 'conversion',
            scope: { kind: 'prefix', value: '+99890123' },
            level: 0,
            started_at: AT,
            until: '2026-01-01T12:15:00.000Z',
            evidence: { from: '2025-12-31T12:00:00.001Z', to: '2026-01-01T11:50:00.000Z', sends: 40, approved: 1, conversion: 0.025 },
          },
        ],
        refusals: [{ rule: 'conversion', country: 'UZ', refusals: 12 }],
        monitored: [],
        countries: [{ country: 'UZ', ...counts }],
        prefixes: { from: '2025-12-31T13:00:00.000Z', rows: [{ account: 'default', prefix: '+99890123', sends: 40, approved: 1, conversion: 0.025 }] },
      },
      "account 'shop' does not exist",
    ),
    '/console/api/webhooks': get(
      'consoleWebhooks',
      'Webhook endpoints (secrets masked) and recent deliveries with status and attempts',
      queryParams(WebhooksQuery),
      {
        endpoints: [{ id: '1', account: 'default', url: 'https://example.com/hooks/otpd', events: null, secret: '********', created_at: AT, rotated_at: null }],
        deliveries: [
          {
            event_id: '0f7e2c1a-9b8d-4c6e-a5f4-3b2a1c0d9e8f',
            type: 'verification.approved',
            account: 'default',
            occurred_at: AT,
            endpoint_id: '1',
            status: 'delivered',
            attempts: 1,
            next_attempt_at: null,
            last_error: null,
            updated_at: AT,
          },
        ],
        next: null,
      },
    ),
    '/console/api/system': get('consoleSystem', 'Version, engine, database size, readiness, providers and the configuration with secrets masked', [], {
      version: '1.0.0',
      engine: 'sqlite',
      database: '/var/lib/otpd/otpd.db',
      database_bytes: 1_562_000_000,
      ready: true,
      checks: { database: 'ok', migrations: 'ok', delivery: 'ok' },
      providers: { sms: [{ name: 'twilio', type: 'twilio' }], email: [{ name: 'log', type: 'log' }], voice: [{ name: 'log', type: 'log' }] },
      config: { server: { listen: '127.0.0.1:8080', metrics_token: '********' } },
    }),
  }
}
