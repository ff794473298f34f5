/**
 * The parts the OpenAPI document (app/openapi.ts assembles it) is built from:
 * each route file documents its own operation with them, and the console's
 * route files share them (console/openapi.ts): TypeBox schemas as plain JSON
 * Schema, responses with their headers and examples, and error responses
 * narrowed to their messages.
 */
import type { TSchema } from '@sinclair/typebox'
import { Msg } from './error-texts.ts'

export type Json = Record<string, unknown>

/** JSON of a TypeBox schema, with every union of string constants written as an `enum`. */
export function plain(s: TSchema | Json): Json {
  return JSON.parse(JSON.stringify(s), (_k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Json
      const any = o.anyOf
      if (
        Array.isArray(any) &&
        any.length > 0 &&
        any.every((x: Json) => typeof x.const === 'string' && Object.keys(x).every((k) => k === 'const' || k === 'type'))
      ) {
        const { anyOf: _drop, ...rest } = o
        return { ...rest, type: 'string', enum: any.map((x: Json) => x.const) }
      }
    }
    return v
  }) as Json
}
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

export const REQUEST_ID = '0b7d4f3e-2c1a-4e5f-9a8b-7c6d5e4f3a2b'

export const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } }
export const retryHeaders = { ...requestIdHeader, 'Retry-After': { $ref: '#/components/headers/RetryAfter' } }
export const replayHeader = { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } }

export interface ResponseOpts {
  retry?: boolean
  /** The operation takes Idempotency-Key: its answers may be replays. */
  replay?: boolean
}

export function response(description: string, schema: Json, example: unknown, opts: ResponseOpts = {}) {
  const headers = { ...(opts.retry ? retryHeaders : requestIdHeader), ...(opts.replay ? replayHeader : {}) }
  return { description, headers, content: { 'application/json': { schema, example } } }
}

/** An exact message, a templated one (a pattern schema whose first `examples` entry is a sample), or a union of exact ones. */
export type Message = string | TSchema
export const sample = (m: Message): string => (typeof m === 'string' ? m : String((m.examples as string[] | undefined)?.[0] ?? (m.anyOf as Json[])[0]!.const))

/** The named ErrorResponse, narrowed to `messages` (and `retry_after` required on a 429). */
export function errorSchema(messages: Message[], retry = false): Json {
  const literals = messages.filter((m): m is string => typeof m === 'string')
  const patterns = messages.filter((m): m is TSchema => typeof m !== 'string').map((m) => plain(m))
  const exact = literals.length > 0 ? [{ type: 'string', enum: literals }] : []
  const error = exact.length + patterns.length === 1 ? [...exact, ...patterns][0] : { anyOf: [...exact, ...patterns] }
  const properties: Json = { error }
  const narrow: Json = { type: 'object', properties }
  if (retry) {
    // Listed under properties too, not only under required: generators (openapi-typescript) type a
    // required key they find no schema for as optional, and a client must see a required integer.
    properties.retry_after = { type: 'integer', minimum: 1, description: 'Seconds to wait, as the Retry-After header' }
    narrow.required = ['retry_after']
  }
  return { allOf: [ref('ErrorResponse'), narrow] }
}

/** An error response: ErrorResponse narrowed to the messages this status can carry, with the first as its example. */
export function errors(description: string, messages: Message[], opts: ResponseOpts = {}) {
  const example: Json = { error: sample(messages[0]!), request_id: REQUEST_ID }
  if (opts.retry) example.retry_after = 30
  return response(description, errorSchema(messages, opts.retry), example, opts)
}

export const notFound = { $ref: '#/components/responses/NotFound' }
export const methodNotAllowed = { '405': { $ref: '#/components/responses/MethodNotAllowed' } }

/** The examples' verification id and expiry. */
export const VERIFICATION_ID = '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f'
export const AT = '2026-01-01T12:05:00.000Z'

/** The 400s of a body that is not a JSON object. */
export const bodyErrors = [Msg.contentType, Msg.invalidJson, Msg.notObject]

/** The answers of an operation that takes Idempotency-Key; `extra409`: its own conflicts beside the running first request. */
export const idempotencyErrors = (extra409: Message[] = []) => ({
  '409': errors(
    'The first request with this Idempotency-Key is still running' + (extra409.length ? ', or the verification is over' : ''),
    [...extra409, Msg.idempotencyInProgress],
    {
      replay: true,
    },
  ),
  '422': errors('This Idempotency-Key was used with another body', [Msg.idempotencyConflict]),
})

/** The 401 of an operation behind an API key. */
export const keyAuth = {
  '401': errors('No API key, or an unknown or revoked one', [Msg.keyRequired, Msg.keyInvalid]),
}
export const apiSecurity = [{ bearerAuth: [] }, { apiKeyHeader: [] }]
export const idempotencyParam = { $ref: '#/components/parameters/IdempotencyKey' }
export const verificationIdParam = { $ref: '#/components/parameters/VerificationId' }

export const TEST_RECIPIENTS =
  '\n\nTest recipients (any real key; nothing delivered, no credit, no per-recipient limit; code always `123456`):\n\n' +
  '| recipient | channels | behaviour |\n|---|---|---|\n' +
  '| `+15550100001` | sms, voice, whatsapp | verifies with `123456` |\n' +
  '| `+15550100002` | sms, voice, whatsapp | every code answers `Invalid code` |\n' +
  '| `+15550100003` | sms, voice, whatsapp | created already expired |\n' +
  '| `success@otpd.test` | email | verifies with `123456` |\n' +
  '| `fail@otpd.test` | email | every code answers `Invalid code` |'
