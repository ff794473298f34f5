/**
 * The metrics otpd exposes at /metrics (docs/operating.md#metrics). The
 * HTTP layer counts requests and outcomes; the composition root feeds provider
 * attempts (the router's onAttempt hook) and the gauges read at scrape time.
 * Label values come from fixed sets or from the operator's own config and
 * accounts, never from a request, so a client cannot grow the series.
 */
import type { Channel } from '../otp/types.ts'
import { Counter, Gauge, Histogram, Registry } from '../lib/prometheus.ts'

export type SendMetricOutcome = 'sent' | 'failed' | 'test' | 'rate_limited' | 'no_credits' | 'fraud_blocked'
export type VerifyMetricResult = 'verified' | 'invalid_code' | 'expired' | 'already_used' | 'not_found' | 'locked'
export type RateLimitKind = 'key' | 'recipient' | 'lockout' | 'recipient_failures'

export interface MetricsSources {
  /** Read from the database at scrape time, before the text is rendered. */
  creditBalances(): Promise<{ account: string; balance: number }[]> | { account: string; balance: number }[]
  /** Sizes in bytes of the database file and its write-ahead log. */
  databaseFiles(): { file: 'database' | 'wal'; bytes: number }[]
  version: string
  startedAt: number
  /** Event deliveries still pending (the outbox depth), read at scrape time. */
  outboxDepth?(): Promise<number>
  /** Webhook endpoints failing (paused, or tried one delivery at a time), read at scrape time. */
  failingEndpoints?(): Promise<number>
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
/** Answers take a few milliseconds at full load (measured at c5e3cd5): the request histogram resolves below 5 ms too. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, ...LATENCY_BUCKETS]
/** A healthy disk flushes in well under a millisecond to a few; the tail is what matters. */
const FLUSH_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]
const VERIFY_RESULTS: VerifyMetricResult[] = ['verified', 'invalid_code', 'expired', 'already_used', 'not_found', 'locked']
const RATE_LIMIT_KINDS: RateLimitKind[] = ['key', 'recipient', 'lockout', 'recipient_failures']
export type WebhookOutcome = 'delivered' | 'retry' | 'failed'
const WEBHOOK_OUTCOMES: WebhookOutcome[] = ['delivered', 'retry', 'failed']

/** One provider's slots and circuit (delivery/provider-guards.ts), as the gauges show them. */
export interface ProviderState {
  provider: string
  circuit: 'closed' | 'open' | 'half_open'
  inFlight: number
  waiting: number
}

const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const

export function createServiceMetrics(sources: MetricsSources) {
  const registry = new Registry()
  const m = addTrafficMetrics(registry)
  const scraped: Scraped = { balances: [], depth: 0, failing: 0 }
  addProcessGauges(registry, sources, scraped)
  let providerStates: () => ProviderState[] = () => []
  addProviderGauges(registry, () => providerStates())
  const webhookDeliveries = addWebhookMetrics(registry, scraped)
  for (const outcome of WEBHOOK_OUTCOMES) webhookDeliveries.touch({ outcome })
  for (const result of VERIFY_RESULTS) m.verifies.touch({ result })
  for (const kind of RATE_LIMIT_KINDS) m.limited.touch({ kind })
  return {
    registry,
    ...recorders(m),
    /** Where the provider gauges read from (the composition sets it once the delivery is built). */
    watchProviders(states: () => ProviderState[]) {
      providerStates = states
    },
    webhookDelivery(outcome: WebhookOutcome) {
      webhookDeliveries.inc({ outcome })
    },
    /** The exposition text; the balances are read first (a failed read leaves their gauge out). */
    async render(onError?: (name: string, err: unknown) => void): Promise<string> {
      try {
        scraped.balances = await sources.creditBalances()
      } catch (err) {
        scraped.balances = err instanceof Error ? err : new Error(String(err))
      }
      try {
        scraped.depth = (await sources.outboxDepth?.()) ?? 0
      } catch (err) {
        scraped.depth = err instanceof Error ? err : new Error(String(err))
      }
      try {
        scraped.failing = (await sources.failingEndpoints?.()) ?? 0
      } catch (err) {
        scraped.failing = err instanceof Error ? err : new Error(String(err))
      }
      return registry.render(onError)
    },
  }
}

/** What the gauges show, read at each scrape (an Error: the read failed, and the gauge is left out). */
interface Scraped {
  balances: { account: string; balance: number }[] | Error
  depth: number | Error
  failing: number | Error
}

/** The requests, their outcomes and the providers' attempts; the exposition lists them in this order. */
function addTrafficMetrics(registry: Registry) {
  return {
    requests: registry.add(new Counter('otpd_http_requests_total', 'HTTP requests by route and status code.', ['route', 'status'])),
    duration: registry.add(new Histogram('otpd_http_request_duration_seconds', 'Time to answer an HTTP request, by route.', ['route'], REQUEST_BUCKETS)),
    sends: registry.add(
      new Counter('otpd_sends_total', 'Send requests that passed validation, by channel, provider (none when nothing was delivered) and outcome.', [
        'channel',
        'provider',
        'outcome',
      ]),
    ),
    verifies: registry.add(new Counter('otpd_verifies_total', 'Verify requests that passed validation, by result.', ['result'])),
    limited: registry.add(
      new Counter(
        'otpd_rate_limited_total',
        'Requests refused by a limit: key (per-key rate), recipient (per-recipient sends), lockout (failed attempts on one verification), recipient_failures (the per-recipient failure cap: wrong codes per recipient in 24 h, on verify and send).',
        ['kind'],
      ),
    ),
    fraud: registry.add(
      new Counter(
        'otpd_fraud_refusals_total',
        'Sends the fraud guard refused (decision refused), or would have refused in monitor mode (decision would_refuse), by rule (geo, ip, new_country, conversion, daily_credit) and destination country (ZZ: unknown; none: email).',
        ['rule', 'country', 'decision'],
      ),
    ),
    workflowSteps: registry.add(
      new Counter(
        'otpd_workflow_steps_total',
        "A workflow's steps whose delivery started (docs/api.md#workflows), by index (0: the send's own) and channel; test recipients' are not counted.",
        ['step', 'channel'],
      ),
    ),
    workflowApprovals: registry.add(
      new Counter(
        'otpd_workflow_approvals_total',
        "Approved workflow verifications (docs/api.md#workflows), by the step current at approval: its index (0: the send's own) and channel; test recipients' are not counted.",
        ['step', 'channel'],
      ),
    ),
    fallbacks: registry.add(
      new Counter(
        'otpd_workflow_fallbacks_total',
        "A workflow's next step started (docs/api.md#workflows), by the channel it left, the channel it started and why (delivery_failed, undelivered, timeout, requested, fraud_blocked, no_credits).",
        ['from', 'to', 'reason'],
      ),
    ),
    smsSegments: registry.add(
      new Counter(
        'otpd_sms_segments_total',
        'SMS segments a provider took (docs/messages.md#encoding-and-segments), by destination country (ZZ: unknown) and encoding (GSM-7, UCS-2): what the vendors bill.',
        ['country', 'encoding'],
      ),
    ),
    attempts: registry.add(
      new Counter(
        'otpd_provider_attempts_total',
        'Delivery attempts by channel, provider and outcome (accepted, failed, rejected, timeout; busy: no slot freed in time; circuit_open: skipped).',
        ['channel', 'provider', 'outcome'],
      ),
    ),
    latency: registry.add(
      new Histogram('otpd_provider_latency_seconds', 'Time a provider took to accept or fail one message.', ['channel', 'provider'], LATENCY_BUCKETS),
    ),
    walFlush: registry.add(
      new Histogram(
        'otpd_wal_flush_seconds',
        'Time one flush of the write-ahead log to disk took (synchronous = FULL): every write is answered only after one. Slow flushes mean a slow or busy disk.',
        [],
        FLUSH_BUCKETS,
      ),
    ),
  }
}

/** The gauges of the process and its database, read at scrape time. */
function addProcessGauges(registry: Registry, sources: MetricsSources, scraped: Scraped): void {
  registry.add(
    new Gauge('otpd_credit_balance', 'Credit balance per account.', () => {
      if (scraped.balances instanceof Error) throw scraped.balances
      return scraped.balances.map((a) => ({ labels: { account: a.account }, value: a.balance }))
    }),
  )
  registry.add(
    new Gauge('otpd_database_size_bytes', 'Size of the SQLite database file and of its write-ahead log.', () =>
      sources.databaseFiles().map((f) => ({ labels: { file: f.file }, value: f.bytes })),
    ),
  )
  registry.add(new Gauge('otpd_build_info', 'The running version of otpd.', () => [{ labels: { version: sources.version }, value: 1 }]))
  registry.add(
    new Gauge('otpd_process_start_time_seconds', 'When this process started, in seconds since the epoch: counters start at 0 then.', () => [
      { value: Math.floor(sources.startedAt / 1000) },
    ]),
  )
}

/** Each provider's circuit (1 for the state it is in), its requests under way and the sends waiting for one of its slots. */
function addProviderGauges(registry: Registry, states: () => ProviderState[]): void {
  registry.add(
    new Gauge('otpd_provider_circuit_state', "Each provider's circuit: 1 for the state it is in (closed, open, half_open), 0 for the others.", () =>
      states().flatMap((p) => CIRCUIT_STATES.map((state) => ({ labels: { provider: p.provider, state }, value: p.circuit === state ? 1 : 0 }))),
    ),
  )
  registry.add(
    new Gauge('otpd_provider_in_flight', 'Requests to each provider under way (at most its max_in_flight).', () =>
      states().map((p) => ({ labels: { provider: p.provider }, value: p.inFlight })),
    ),
  )
  registry.add(
    new Gauge('otpd_provider_waiting', "Sends waiting for one of the provider's slots.", () =>
      states().map((p) => ({ labels: { provider: p.provider }, value: p.waiting })),
    ),
  )
}

/** The webhook deliveries' outcomes and the outbox's depth; answers the deliveries' counter. */
function addWebhookMetrics(registry: Registry, scraped: Scraped) {
  const deliveries = registry.add(
    new Counter(
      'otpd_webhook_deliveries_total',
      'Webhook delivery attempts by outcome: delivered (2xx), retry (failed, tried again later), failed (given up after 24 h).',
      ['outcome'],
    ),
  )
  registry.add(
    new Gauge('otpd_webhook_outbox_depth', 'Webhook deliveries waiting to be sent or retried (the event outbox depth).', () => {
      if (scraped.depth instanceof Error) throw scraped.depth
      return [{ value: scraped.depth }]
    }),
  )
  registry.add(
    new Gauge('otpd_webhook_endpoints_failing', 'Webhook endpoints that failed 5 tries in a row or more: paused, or tried one delivery at a time.', () => {
      if (scraped.failing instanceof Error) throw scraped.failing
      return [{ value: scraped.failing }]
    }),
  )
  return deliveries
}

/** What the HTTP layer and the composition call to count. */
function recorders(m: ReturnType<typeof addTrafficMetrics>) {
  return {
    request(route: string, status: number, seconds: number) {
      m.requests.inc({ route, status: String(status) })
      m.duration.observe({ route }, seconds)
    },
    send(channel: Channel, provider: string, outcome: SendMetricOutcome) {
      m.sends.inc({ channel, provider, outcome })
    },
    verify(result: VerifyMetricResult) {
      m.verifies.inc({ result })
    },
    rateLimited(kind: RateLimitKind) {
      m.limited.inc({ kind })
    },
    /** Countries come from the phone metadata (a fixed set of about 250), never from the request's text. */
    fraudRefusal(rule: string, country: string | null, enforced: boolean) {
      m.fraud.inc({ rule, country: country ?? 'none', decision: enforced ? 'refused' : 'would_refuse' })
    },
    /** Countries come from the phone metadata, never from the request's text. */
    smsSent(country: string, encoding: string, segments: number) {
      m.smsSegments.inc({ country, encoding }, segments)
    },
    workflowStep(step: number, channel: string) {
      m.workflowSteps.inc({ step: String(step), channel })
    },
    workflowApproval(step: number, channel: string) {
      m.workflowApprovals.inc({ step: String(step), channel })
    },
    /** Channels and reasons are fixed sets, never the request's text. */
    fallback(from: string, to: string, reason: string) {
      m.fallbacks.inc({ from, to, reason })
    },
    walFlush(ms: number) {
      m.walFlush.observe({}, ms / 1000)
    },
    attempt(a: { channel: Channel; provider: string; outcome: string; ms: number }) {
      m.attempts.inc({ channel: a.channel, provider: a.provider, outcome: a.outcome })
      // Skipped (circuit open) or never sent (no slot): no time of the provider's to observe.
      if (a.outcome !== 'busy' && a.outcome !== 'circuit_open') m.latency.observe({ channel: a.channel, provider: a.provider }, a.ms / 1000)
    },
  }
}

export type ServiceMetrics = ReturnType<typeof createServiceMetrics>
