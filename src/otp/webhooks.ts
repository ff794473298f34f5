/**
 * Webhook endpoints and the event log as the operator sees them (`otpd
 * webhooks ...`, `otpd events ...`, docs/api.md#events). A request the
 * operator got wrong throws OperatorError, whose message the CLI prints.
 *
 * A secret is shown once, when it is made; the database keeps it sealed
 * (AES-256-GCM, lib/secret-box.ts) under a key derived from the server secret.
 */
import type { Clock } from '../lib/clock.ts'
import { didYouMean } from '../lib/nearest-name.ts'
import { DEFAULT_ACCOUNT, OperatorError } from './admin.ts'
import { type Actor, audit } from './audit.ts'
import { EVENT_TYPES } from './events.ts'
import type { EndpointRow, EventDeliveryStatus, EventRow, EventType, Repos, Storage } from './ports/index.ts'

export const SECRET_PREFIX = 'whsec_'
/** How long after a rotation the old secret still signs (a second signature). */
export const ROTATION_OVERLAP_MS = 86_400_000

export const EVENT_STATUSES: readonly EventDeliveryStatus[] = ['pending', 'failed', 'delivered']

/** Seals secrets for storage (lib/secret-box.ts). */
export interface SecretSealer {
  seal(secret: string): Uint8Array
  open(sealed: Uint8Array): string
}

export interface NewEndpoint {
  id: number
  account: string
  url: string
  events: EventType[] | null
  secret: string
}

const MAX_URL = 2048

/** The URL an endpoint is POSTed to; an OperatorError says what is wrong. */
export function checkUrl(raw: string): string {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw new OperatorError(`webhook URL '${raw}' is not a valid absolute URL (example: https://example.com/otpd-events)`)
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new OperatorError(`webhook URL '${raw}' must start with https:// or http://`)
  if (u.username || u.password) throw new OperatorError(`webhook URL '${raw}' must not carry a user name or password: the signature authenticates otpd`)
  if (u.hash) throw new OperatorError(`webhook URL '${raw}' must not have a #fragment (it is never sent)`)
  if (raw.length > MAX_URL) throw new OperatorError(`webhook URL is longer than ${MAX_URL} characters`)
  return u.href
}

/** `T,T` as given to --events; an OperatorError names an unknown type. */
export function parseEventTypes(list: string): EventType[] {
  const types = [
    ...new Set(
      list
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
    ),
  ]
  if (types.length === 0) throw new OperatorError(`--events needs at least one event type; known types: ${EVENT_TYPES.join(', ')}`)
  for (const t of types) {
    if (!(EVENT_TYPES as readonly string[]).includes(t)) throw new OperatorError(`unknown event type '${t}'; known types: ${EVENT_TYPES.join(', ')}`)
  }
  return types as EventType[]
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks' symmetric secret). */
export function newSecret(): string {
  return SECRET_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')
}

export class Webhooks {
  constructor(
    private readonly storage: Storage,
    private readonly sealer: SecretSealer,
    private readonly clock: Clock,
    private readonly actor?: Actor,
  ) {}

  /** The same use cases, each change written to the audit log as `actor`'s (otp/audit.ts). */
  as(actor: Actor): Webhooks {
    return new Webhooks(this.storage, this.sealer, this.clock, actor)
  }

  async add(opts: { url: string; account?: string; events?: string }): Promise<NewEndpoint> {
    const url = checkUrl(opts.url)
    const events = opts.events === undefined ? null : parseEventTypes(opts.events)
    const secret = newSecret()
    const sealed = this.sealer.seal(secret)
    return this.storage.write(async (r) => {
      const a = await accountIn(r, opts.account)
      const at = this.clock.now()
      const id = await r.webhooks.insertEndpoint({ accountId: a.id, url, events, secret: sealed, at })
      await audit(r, this.actor, at, 'webhook.added', `webhook ${id}`, { account: a.name, url, events })
      return { id, account: a.name, url, events, secret }
    })
  }

  list(account?: string): Promise<EndpointRow[]> {
    return this.storage.read(async (r) => r.webhooks.listEndpoints(account === undefined ? undefined : (await accountIn(r, account)).id))
  }

  remove(id: string): Promise<EndpointRow> {
    return this.storage.write(async (r) => {
      const e = await endpointIn(r, id)
      await r.webhooks.deleteEndpoint(e.id)
      await audit(r, this.actor, this.clock.now(), 'webhook.removed', `webhook ${e.id}`, { account: e.account, url: e.url })
      return e
    })
  }

  /** A new secret, printed once; the old one still signs for ROTATION_OVERLAP_MS. */
  async rotateSecret(id: string): Promise<{ endpoint: EndpointRow; secret: string; previousUntil: number }> {
    const secret = newSecret()
    const sealed = this.sealer.seal(secret)
    return this.storage.write(async (r) => {
      const e = await endpointIn(r, id)
      const at = this.clock.now()
      await r.webhooks.setSecret(e.id, sealed, e.secret, at)
      await audit(r, this.actor, at, 'webhook.secret_rotated', `webhook ${e.id}`, { account: e.account, url: e.url })
      return { endpoint: { ...e, secret: sealed, prevSecret: e.secret, rotatedAt: at }, secret, previousUntil: at + ROTATION_OVERLAP_MS }
    })
  }

  events(q: { account?: string; status?: string; type?: string; limit?: number }): Promise<EventRow[]> {
    const status = q.status
    if (status !== undefined && !(EVENT_STATUSES as readonly string[]).includes(status)) {
      throw new OperatorError(`--status must be one of ${EVENT_STATUSES.join(', ')}, got '${status}'`)
    }
    const type = q.type
    if (type !== undefined && !(EVENT_TYPES as readonly string[]).includes(type)) {
      throw new OperatorError(`--type must be one of ${EVENT_TYPES.join(', ')}, got '${type}'${didYouMean(type, EVENT_TYPES)}`)
    }
    return this.storage.read(async (r) =>
      r.webhooks.listEvents({
        accountId: q.account === undefined ? undefined : (await accountIn(r, q.account)).id,
        status: status as EventDeliveryStatus | undefined,
        type: type as EventType | undefined,
        limit: q.limit ?? 100,
      }),
    )
  }

  /** Sends one event again (same id and body) to every endpoint of its account subscribed to its type. */
  replay(id: string): Promise<{ event: EventRow; deliveries: number }> {
    return this.storage.write(async (r) => {
      const event = await r.webhooks.findEvent(id)
      if (!event) throw new OperatorError(`no event has id '${id}' (see: otpd events list)`, 'not_found')
      const at = this.clock.now()
      const deliveries = await r.webhooks.rearm(event.seq, at, false)
      await audit(r, this.actor, at, 'event.replayed', `event ${event.id}`, { type: event.type, account: event.account, deliveries })
      return { event, deliveries }
    })
  }

  /** Sends every failed delivery again. Returns how many events and deliveries. */
  async replayFailed(): Promise<{ events: number; deliveries: number }> {
    let events = 0
    let deliveries = 0
    for (;;) {
      const page = await this.storage.write(async (r) => {
        const seqs = await r.webhooks.failedEvents(200)
        let n = 0
        for (const seq of seqs) n += await r.webhooks.rearm(seq, this.clock.now(), true)
        if (seqs.length > 0) await audit(r, this.actor, this.clock.now(), 'events.failed_replayed', 'failed deliveries', { events: seqs.length, deliveries: n })
        return { seqs: seqs.length, n }
      })
      events += page.seqs
      deliveries += page.n
      if (page.seqs < 200) return { events, deliveries }
    }
  }
}

async function accountIn(r: Repos, name: string = DEFAULT_ACCOUNT) {
  const a = await r.admin.findAccount(name)
  if (!a) throw new OperatorError(`account '${name}' does not exist (create it with: otpd accounts create ${name})`, 'not_found')
  return a
}

async function endpointIn(r: Repos, ref: string): Promise<EndpointRow> {
  const id = /^[0-9]{1,15}$/.test(ref) ? Number(ref) : NaN
  const e = Number.isNaN(id) ? undefined : await r.webhooks.findEndpoint(id)
  if (!e) throw new OperatorError(`no webhook endpoint has id '${ref}' (see: otpd webhooks list)`, 'not_found')
  return e
}
