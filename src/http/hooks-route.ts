/**
 * POST /hooks/NAME (docs/integrations.md): an identity server's hook. The raw
 * body (bounded) goes to the type's adapter, which authenticates it over its
 * exact bytes and reads the message; the delivery is a send of the hook's
 * account (hooks/delivery.ts); every outcome is answered in the shape that
 * identity server reads. Nothing is written for a request that fails authentication.
 */
import { Elysia } from 'elysia'
import { HOOK_CODE_LIFETIME_SECONDS, type HookConfig } from '../config/schema.ts'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { HookAdapter, HookMessage, HookRefusal, HookReply, HookSettings } from '../hooks/adapter.ts'
import { type HookDeliveries, type HookOutcome, storedOutcome } from '../hooks/delivery.ts'
import { SHARED_HOOK_KEYS } from '../hooks/check.ts'
import { HOOK_ADAPTERS } from '../hooks/registry.ts'
import type { SendOutcome } from '../otp/send.ts'
import type { SendInput } from '../otp/types.ts'
import { readBytes } from './body.ts'
import { Msg } from './error-texts.ts'
import { errorReply, REQUEST_ID_HEADER, respond } from './reply.ts'
import { noteOf } from './request-log.ts'
import { countSend, sendReply } from './send-route.ts'
import type { ServiceMetrics } from './service-metrics.ts'
import { recipientProblem } from './validate.ts'

/** A Supabase user object with its metadata can pass the API's 16 KiB; this bounds it still. */
export const HOOK_BODY_BYTES = 64 * 1024
const CODE = /^[A-Za-z0-9]{1,32}$/

export interface HookRouteDeps {
  logger: Logger
  metrics: ServiceMetrics
  clock: Clock
  hooks: HookDeliveries
  /** The `[hooks.NAME]` table in force and its secret, or undefined when none is configured. */
  hookNamed(name: string): { config: HookConfig; secret: string | undefined } | undefined
  resolveLocale(tag: string): string | null
}

/** The type's own settings: the table's keys past the shared ones. */
const SHARED_KEYS = new Set<string>(SHARED_HOOK_KEYS)

export function hookSettings(name: string, config: HookConfig, secret: string | undefined): HookSettings {
  const options = Object.fromEntries(Object.entries(config).filter(([k]) => !SHARED_KEYS.has(k))) as HookSettings['options']
  return { name, type: config.type, secret, options }
}

/** The send a message asks for, or the refusal of what it holds. */
export function hookSendInput(m: HookMessage, resolveLocale: (tag: string) => string | null): { ok: true; value: SendInput } | { ok: false; error: string } {
  if (recipientProblem(m.channel, m.recipient) !== null) return { ok: false, error: Msg.hookRecipient }
  if (m.code !== undefined && !CODE.test(m.code)) return { ok: false, error: Msg.hookCode }
  if (m.code === undefined && (m.text === undefined || m.text.length < 1 || m.text.length > 1600)) return { ok: false, error: Msg.hookText }
  // A language the catalogue lacks falls back to the account's: a user's preference, not an error.
  const locale = m.locale === undefined ? undefined : (resolveLocale(m.locale) ?? undefined)
  const value: SendInput = { channel: m.channel, recipient: m.recipient, code: m.code, locale, subject: m.subject, link: m.link }
  if (m.code === undefined) Object.assign(value, { message: m.text, wholeText: true })
  return { ok: true, value }
}

const KIND: Partial<Record<SendOutcome['kind'], HookRefusal['kind']>> = {
  key_limited: 'rate_limited',
  recipient_limited: 'rate_limited',
  recipient_capped: 'rate_limited',
  no_credits: 'no_credits',
  delivery_failed: 'unavailable',
  too_long: 'invalid',
}

/** A send's outcome as the adapter answers it; the message is the API's own (error-texts.ts). */
export function hookAnswer(adapter: HookAdapter, outcome: HookOutcome): HookReply {
  switch (outcome.kind) {
    case 'sent':
      return adapter.accepted(outcome.verificationId)
    // A retry while the first request still delivers: that one answers for both.
    case 'idempotency_in_progress':
      return adapter.accepted('')
    case 'replay':
      return hookAnswer(adapter, storedOutcome(outcome.answer))
    case 'idempotency_conflict':
      return adapter.refused({ kind: 'invalid', message: Msg.idempotencyConflict })
    case 'no_account':
      return adapter.refused({ kind: 'unavailable', message: Msg.hookAccountMissing, retryAfter: 60 })
  }
  const reply = sendReply(outcome)
  const kind = outcome.kind === 'fraud_blocked' ? (outcome.rule === 'geo' ? 'blocked' : 'rate_limited') : (KIND[outcome.kind] ?? 'unavailable')
  return adapter.refused({ kind, message: String(reply.body.error), retryAfter: reply.retryAfter })
}

function render(reply: HookReply, requestId: string): Response {
  return new Response(reply.body, { status: reply.status, headers: { 'content-type': 'application/json', ...reply.headers, [REQUEST_ID_HEADER]: requestId } })
}

export function hooksRoute(deps: HookRouteDeps) {
  return new Elysia({ name: 'hooks-route' }).post(
    '/hooks/:name',
    ({ request, params }) =>
      respond(deps.logger, request, Msg.internal, async (requestId) => {
        const found = deps.hookNamed(params.name)
        const adapter = found && HOOK_ADAPTERS[found.config.type]
        if (!found || !adapter) return errorReply(404, Msg.notFound)
        const note = noteOf(request)
        note.hook = params.name
        const bytes = await readBytes(request, HOOK_BODY_BYTES)
        if ('ok' in bytes) return errorReply(bytes.status, bytes.error)
        const settings = hookSettings(params.name, found.config, found.secret)
        const hookRequest = { method: request.method, headers: request.headers, rawBody: bytes, now: deps.clock.now() }
        const auth = adapter.authenticate(hookRequest, settings)
        if (!auth.ok) {
          note.outcome = 'unauthenticated'
          deps.logger.info('hook request refused', { request_id: requestId, hook: params.name, reason: auth.reason })
          return render(adapter.refused({ kind: 'unauthenticated', message: Msg.hookUnauthenticated }), requestId)
        }
        const parsed = adapter.parse(hookRequest, settings)
        const input = parsed.ok ? hookSendInput(parsed.message, deps.resolveLocale) : { ok: false as const, error: Msg.hookPayload }
        if (!parsed.ok || !input.ok) {
          note.outcome = 'invalid'
          if (!parsed.ok) deps.logger.info('hook payload refused', { request_id: requestId, hook: params.name, reason: parsed.reason })
          return render(adapter.refused({ kind: 'invalid', message: input.ok ? Msg.hookPayload : input.error }), requestId)
        }
        note.channel = input.value.channel
        const plan = { name: params.name, account: found.config.account, codeLifetimeSeconds: found.config.code_lifetime_seconds ?? HOOK_CODE_LIFETIME_SECONDS }
        const outcome = await deps.hooks.deliver(plan, parsed.message, input.value, requestId)
        note.outcome = outcome.kind
        if (outcome.kind !== 'no_account' && outcome.kind !== 'replay' && outcome.kind !== 'idempotency_conflict' && outcome.kind !== 'idempotency_in_progress')
          countSend(deps.metrics, input.value, outcome)
        if (outcome.kind === 'no_account') deps.logger.error('hook account does not exist', { request_id: requestId, hook: params.name, account: plan.account })
        return render(hookAnswer(adapter, outcome), requestId)
      }),
    { parse: 'none' },
  )
}
