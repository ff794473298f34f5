/**
 * The parts the console's read endpoints (read-routes.ts) document their
 * OpenAPI path objects with (tag `Console`): parameters from the same TypeBox
 * schemas the routes check (read-queries.ts), an example on every answer,
 * errors as the API's `ErrorResponse`. Security is the console's session
 * (`consoleSession`, a scheme the console's document declares).
 */
import type { TObject, TSchema } from '@sinclair/typebox'

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
export function queryParams(schema: TObject): Json[] {
  return Object.entries(schema.properties).map(([name, s]) => {
    const plain = JSON.parse(JSON.stringify(s as TSchema)) as Json & { anyOf?: { const: string }[]; description?: string }
    const out: Json = plain.anyOf ? { type: 'string', enum: plain.anyOf.map((x) => x.const) } : plain
    return { name, in: 'query', required: false, description: plain.description, schema: { ...out, description: undefined } }
  })
}

export function readOperation(operationId: string, summary: string, params: Json[], example: Json, notFound?: string): Json {
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

export const READ_AT = '2026-01-01T12:00:00.000Z'
export const COUNTS_EXAMPLE = { sends: 120, accepted: 118, delivered: 110, undelivered: 3, failed: 2, approved: 96, checked: 0, conversion: 0.8 }
