/**
 * The request services behind the API's routes (send, verify, status,
 * cancel, receipts), each built once on the core, and the live settings a
 * reload updates in them (reload.ts).
 */
import { tlsFingerprint } from '../config/tls.ts'
import type { HttpDeps } from '../http/app.ts'
import type { Readiness } from '../http/ops-routes.ts'
import type { ServiceMetrics } from '../http/service-metrics.ts'
import { SecretBox } from '../lib/secret-box.ts'
import { VerificationIds } from '../lib/verification-id.ts'
import { Authenticator } from '../otp/api-keys.ts'
import { CancelService } from '../otp/cancel.ts'
import { NextService } from '../otp/next.ts'
import { FraudGuard } from '../otp/fraud.ts'
import { Idempotency } from '../otp/idempotency.ts'
import { KeyLimiter } from '../otp/key-limiter.ts'
import { ReceiptService } from '../otp/receipts.ts'
import { SendService } from '../otp/send.ts'
import { StatusService } from '../otp/status.ts'
import type { SmsInfo } from '../otp/types.ts'
import { VerifyService } from '../otp/verify.ts'
import { buildCatalogue } from './catalogue.ts'
import { autoRoutesOf } from './routing.ts'
import type { Core } from './core.ts'
import type { ServerDelivery } from './delivery.ts'
import { receiptReadersInForce } from './delivery.ts'
import { fraudSettingsOf } from './fraud.ts'
import { hookRouteDeps } from './hooks.ts'
import { type InForce, type LiveSettings, limitsOf } from './reload.ts'

export interface ServiceSources {
  core: Core
  /** The config and environment in force (a reload replaces them). */
  inForce: InForce
  delivery: ServerDelivery
  metrics: ServiceMetrics
  readiness(): Promise<Readiness>
  /** The receipt URLs' base (restart-only: receipt URLs handed out must keep working). */
  publicUrl: string | undefined
  /** The OpenAPI document served at /api/v1/openapi.json. */
  openapi: Record<string, unknown>
  /** Whether the event outbox holds `[events] max_queued` deliveries, as last counted (docs/events.md#a-ceiling-on-queued-events). */
  outboxFull(): boolean
}

export interface RequestServices {
  http: HttpDeps
  ids: VerificationIds
  /** Named, so a reload can replace its settings and the console can read them. */
  guard: FraudGuard
  live: LiveSettings
}

export function requestServices(s: ServiceSources): RequestServices {
  const { config } = s.inForce
  const { storage, clock, logger, hasher } = s.core
  const { metrics } = s
  const ids = new VerificationIds(hasher)
  const limits = limitsOf(config)
  const auth = new Authenticator(storage, hasher, clock)
  s.core.admin.onKeyChange(() => auth.forget())
  const makeLimiter = (max: number) => new KeyLimiter(storage, clock, max)
  const limiter = makeLimiter(limits.keyRequestsPerMinute)
  const idempotency = new Idempotency(hasher, { retentionHours: config.idempotency.retention_hours })
  const guard = new FraudGuard(fraudSettingsOf(config), hasher)
  const sendDeps = {
    ...{ storage, delivery: s.delivery.delivery, hasher, ids, clock, logger, limits, limiter, idempotency, guard },
    defaultCodeLength: config.codes.default_length,
    onFraudDecision: (x: { rule: string; country: string | null }, enforced: boolean) => metrics.fraudRefusal(x.rule, x.country, enforced),
    messages: buildCatalogue(config),
    onSmsSent: (country: string, sms: SmsInfo) => metrics.smsSent(country, sms.encoding, sms.segments),
    sealer: new SecretBox(hasher, 'workflow-steps'),
    routes: autoRoutesOf(config),
    onFallback: (from: string, to: string, reason: string) => metrics.fallback(from, to, reason),
    onStep: (step: number, channel: string) => metrics.workflowStep(step, channel),
  }
  const verifyDeps = { storage, hasher, ids, clock, limits, limiter, idempotency }
  const statusDeps = { storage, ids, clock, limits, limiter }
  const cancelDeps = { storage, ids, clock, limits, limiter, idempotency }
  const send = new SendService(sendDeps)
  const nextDeps = { ...cancelDeps, fallback: send.fallback }
  const http: HttpDeps = {
    ...{ readiness: s.readiness, metrics, logger, publicUrl: s.publicUrl, auth, limiter },
    receiptReaders: receiptReadersInForce({ config: () => s.inForce.config, env: () => s.inForce.env, clock, publicUrl: s.publicUrl }),
    receipts: new ReceiptService({ storage, ids, clock, onUndelivered: (target) => send.fallback.afterUndelivered(target) }),
    send,
    hookRoute: hookRouteDeps({ core: s.core, inForce: s.inForce, delivery: s.delivery, metrics, logger, send }),
    verify: new VerifyService(verifyDeps),
    status: new StatusService(statusDeps),
    cancel: new CancelService(cancelDeps),
    next: new NextService(nextDeps),
    lockoutSeconds: limits.lockoutSeconds,
    maxSendsInFlight: config.delivery.max_sends_in_flight,
    outboxFull: s.outboxFull,
    openapi: s.openapi,
    metricsToken: config.server.metrics_token,
  }
  storage.onStale(() => http.limiter.forget())
  const live: LiveSettings = {
    inForce: s.inForce,
    tls: tlsFingerprint(config.server.tls),
    limits,
    delivery: s.delivery.switchable,
    makeDelivery: s.delivery.makeDelivery,
    makeLimiter,
    makeCatalogue: buildCatalogue,
    holders: [sendDeps, verifyDeps, statusDeps, cancelDeps, nextDeps, http],
    idempotency: idempotency.settings,
    send: sendDeps,
    http,
    fraud: guard,
  }
  return { http, ids, guard, live }
}
