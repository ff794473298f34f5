/**
 * POST /api/v1/receipts/{provider} (docs/api.md#delivery-receipts): delivery
 * receipts from vendors. No API key: the vendor's signature instead, checked
 * by the provider's reader before anything in the receipt is trusted. Answers:
 * 404 `Not found` when receipts are off (no `server.public_url`) or the name
 * is no configured provider with receipts; 403 `Invalid signature`; 200 for
 * every signed receipt, also one for an unknown message (vendors retry
 * anything else).
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import type { ReceiptItem, ReceiptReader, ReceiptReading, ReceiptService } from '../otp/receipts.ts'
import { MAX_BODY_BYTES, readCapped } from './body.ts'
import { Msg } from './error-texts.ts'
import { errorReply, render, respond, type Reply } from './reply.ts'
import { noteOf, requestIdOf } from './request-log.ts'
import { errors, methodNotAllowed, ref, REQUEST_ID, response, VERIFICATION_ID } from './openapi-parts.ts'

export interface ReceiptRouteDeps {
  logger: Logger
  receipts: ReceiptService
  /** `server.public_url` without a trailing slash; receipts are off without it. */
  publicUrl: string | undefined
  /** The configured providers' receipt readers, by name (they follow a reload). */
  receiptReaders(): Map<string, ReceiptReader>
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/** The path and query exactly as the client sent them. */
function pathAndQuery(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return start === -1 ? '/' : url.slice(start)
}

/**
 * GET: a vendor's subscription handshake (Meta's `hub.mode=subscribe` with the
 * verify token: 200 with `hub.challenge` as the body, else 403); a provider
 * with no handshake answers 405 as before.
 */
function handshake(deps: ReceiptRouteDeps, request: Request, provider: string): Response {
  const rid = requestIdOf(request)
  const reader = deps.publicUrl === undefined ? undefined : deps.receiptReaders().get(provider)
  if (reader === undefined) return render(errorReply(404, Msg.notFound), rid)
  if (!reader.handshake) return render(errorReply(405, Msg.methodNotAllowed), rid)
  const challenge = reader.handshake(new URL(request.url).searchParams)
  if (challenge === null) return render(errorReply(403, Msg.invalidSignature), rid)
  return new Response(challenge, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-request-id': rid } })
}

/** Each status of a reading, recorded in turn: `recorded` when any moved a verification. */
async function recordAll(deps: ReceiptRouteDeps, provider: string, reading: ReceiptReading & { kind: 'signed' | 'batch' }): Promise<'recorded' | 'ignored'> {
  const items: ReceiptItem[] =
    reading.kind === 'batch' ? reading.items : [{ verificationId: reading.verificationId, ref: null, state: reading.state, error: reading.error ?? null }]
  let outcome: 'recorded' | 'ignored' = 'ignored'
  for (const item of items) {
    if (item.state === null || (item.verificationId === null && item.ref === null)) continue
    const one = await deps.receipts.record({ provider, verificationId: item.verificationId, ref: item.ref, state: item.state, error: item.error })
    if (one === 'recorded') outcome = 'recorded'
  }
  return outcome
}

export function receiptsRoute(deps: ReceiptRouteDeps) {
  return new Elysia({ name: 'receipts-route' })
    .get('/api/v1/receipts/:provider', ({ request, params }) => handshake(deps, request, params.provider), { parse: 'none' })
    .post(
      '/api/v1/receipts/:provider',
      ({ request, params }) =>
        respond(deps.logger, request, Msg.internal, async (): Promise<Reply> => {
          const reader = deps.publicUrl === undefined ? undefined : deps.receiptReaders().get(params.provider)
          if (deps.publicUrl === undefined || reader === undefined) return errorReply(404, Msg.notFound)
          if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) return errorReply(413, Msg.bodyTooLarge)
          let bytes: Uint8Array | null
          try {
            bytes = await readCapped(request, MAX_BODY_BYTES)
          } catch {
            return errorReply(400, Msg.invalidJson)
          }
          if (bytes === null) return errorReply(413, Msg.bodyTooLarge)
          let body: string
          try {
            body = decoder.decode(bytes)
          } catch {
            return errorReply(403, Msg.invalidSignature)
          }
          const note = noteOf(request)
          const reading = reader.read({ url: deps.publicUrl + pathAndQuery(request.url), headers: request.headers, body, bytes })
          if (reading.kind === 'forged') {
            note.outcome = 'invalid_signature'
            return errorReply(403, Msg.invalidSignature)
          }
          if (reading.kind === 'malformed') return errorReply(400, reading.reason === 'json' ? Msg.invalidJson : Msg.notObject)
          note.outcome = await recordAll(deps, params.provider, reading)
          return { status: 200, body: { success: true } }
        }),
      { parse: 'none' },
    )
}

/** The GET operation: Meta's subscription handshake (docs/delivery.md#whatsapp-receipts). */
export const receiptsHandshakeOperation = {
  operationId: 'answerReceiptHandshake',
  tags: ['Receipts'],
  summary: "A vendor's webhook subscription handshake",
  description:
    'Only with `server.public_url` set, for a `whatsapp` provider: Meta verifies the callback URL with `hub.mode=subscribe`, ' +
    "the provider's verify token and a challenge, which is answered as the body. Other provider types answer 405.",
  security: [],
  parameters: [
    { name: 'provider', in: 'path', required: true, description: "the provider's name in the config (`[providers.NAME]`)", schema: { type: 'string' } },
    { name: 'hub.mode', in: 'query', required: true, schema: { type: 'string', enum: ['subscribe'] } },
    { name: 'hub.verify_token', in: 'query', required: true, description: 'the verify token (`verify_token_env`)', schema: { type: 'string' } },
    { name: 'hub.challenge', in: 'query', required: true, description: 'echoed as the body', schema: { type: 'string' } },
  ],
  responses: {
    '200': { description: 'The challenge, as plain text', content: { 'text/plain': { schema: { type: 'string' }, example: '1158201444' } } },
    '403': errors('Another mode, a missing or wrong verify token, no challenge', [Msg.invalidSignature]),
    '404': errors('Receipts are off, or no provider with receipts has this name', [Msg.notFound]),
    '405': errors('A provider type without a handshake', [Msg.methodNotAllowed]),
    '500': errors('Internal fault', [Msg.internal]),
  },
}

/** The route's operation in the OpenAPI document (app/openapi.ts assembles it). */
export const receiptsOperation = {
  operationId: 'postDeliveryReceipt',
  tags: ['Receipts'],
  summary: "A vendor's delivery receipt",
  description:
    "Only with `server.public_url` set. `{provider}` is the provider's name in the config. No API key: the vendor's signature " +
    '(Twilio `X-Twilio-Signature`; Vonage `sig` with the signature secret, SHA-256 HMAC, or for the Messages API a JWT signed with it; ' +
    'Meta `X-Hub-Signature-256` over the raw body with the app secret; the webhook provider `X-Otpd-Signature`). ' +
    "A receipt for an unknown message, or with a status that changes nothing, is 200; Meta's notifications may carry several statuses. " +
    '`delivered` and `undelivered` are final.',
  security: [],
  parameters: [
    { name: 'provider', in: 'path', required: true, description: "the provider's name in the config (`[providers.NAME]`)", schema: { type: 'string' } },
  ],
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: { type: 'object', additionalProperties: { type: 'string' }, description: "Twilio's status callback, or Vonage's delivery receipt" },
        example: { MessageSid: 'SM0123', MessageStatus: 'delivered' },
      },
      'application/json': {
        schema: { anyOf: [ref('WebhookReceipt'), { type: 'object', description: "Vonage's delivery receipt (POST-JSON)" }] },
        example: { verification_id: VERIFICATION_ID, status: 'delivered' },
      },
    },
  },
  responses: {
    '200': response('Taken (or ignored: unknown message, a status that changes nothing)', ref('ReceiptResponse'), { success: true, request_id: REQUEST_ID }),
    '400': errors("Signed, but the webhook provider's body is not a JSON object", [Msg.invalidJson, Msg.notObject]),
    '403': errors('A missing or wrong signature: nothing changes', [Msg.invalidSignature]),
    '404': errors('Receipts are off, or no provider with receipts has this name', [Msg.notFound]),
    ...methodNotAllowed,
    '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
    '500': errors('Internal fault', [Msg.internal]),
  },
}
