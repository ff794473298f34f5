/**
 * The console's searches (docs/console.md): verifications by id, by a
 * recipient typed in (counted and hashed exactly as a send stores it, so it
 * is found without ever being stored in clear), by country, status and
 * period, newest first, a page at a time; one verification with its
 * timeline; webhook endpoints and their recent deliveries. Recipients are
 * shown masked only. A search by recipient is limited per operator and
 * written to the audit log (never the value), in one transaction, before it
 * reads: an operator cannot try candidates for a mask quickly or unseen.
 */
import type { Clock } from '../lib/clock.ts'
import { type Actor, audit } from './audit.ts'
import { ATTEMPT_WINDOW_MS, windowFull } from './operators.ts'
import type { Hasher } from '../lib/secrets.ts'
import { periodRange, pickAccount, type Period } from './console-stats.ts'
import type { DeliveryRow, EndpointRow, EventDeliveryStatus, RefusedSend, Repos, Storage, TimelineEvent, VerificationStatus } from './ports/index.ts'
import { recipientIdentity } from './recipient-identity.ts'
import { HASH_PURPOSE_RECIPIENT, RECIPIENT_HASH_BYTES } from './send.ts'
import { decideStatus } from './status.ts'
import type { Verification } from './types.ts'

/** Rows a filtered page looks at, at most (docs/console.md#performance). */
export const SEARCH_BUDGET = 20_000
const DELIVERY_BUDGET = 5_000
/** Searches by recipient one operator may make in RECIPIENT_SEARCH_WINDOW_MS (docs/console.md#verifications). */
export const RECIPIENT_SEARCHES_PER_HOUR = 30
/** Its rows are kept as long as sign-in attempts' (operators.ts ATTEMPT_WINDOW_MS), which must be no shorter. */
export const RECIPIENT_SEARCH_WINDOW_MS = ATTEMPT_WINDOW_MS

export interface ConsoleSearchDeps {
  storage: Storage
  clock: Clock
  hasher: Hasher
  /** The row number a verification id names (lib/verification-id.ts). */
  seqOf(id: string): number | null
}

export interface SearchQuery {
  period: Period
  account?: string
  id?: string
  /** A number (E.164, spaces and dashes allowed) or an email address, as typed. */
  recipient?: string
  country?: string
  status?: VerificationStatus
  cursor?: string
  limit: number
}

export interface VerificationView {
  verification: Verification
  account: string
  /** At the time of the search (docs/api.md#verification-status), without the recipient-wide failure cap. */
  status: VerificationStatus
}

/** A refused send found by recipient, with its account's name. */
export interface RefusalView {
  send: RefusedSend
  account: string
}

export interface SearchResult {
  rows: VerificationView[]
  next: string | null
  from: number
  to: number
  /** A search by recipient only: the sends of it the fraud guard refused in the period. */
  refusals?: RefusalView[]
}

export type Found<T> = { ok: true; value: T } | { ok: false; status: 400 | 404 | 429; error: string; retryAfter?: number }

export function recipientSearchesLimited(seconds: number): string {
  return `Too many searches by recipient: at most ${RECIPIENT_SEARCHES_PER_HOUR} an hour per operator. Please try again in ${seconds} seconds.`
}

/** `at.seq` of the last row: where the next page starts. */
export function encodeCursor(p: { at: number; seq: number }): string {
  return `${p.at}.${p.seq}`
}

export function decodeCursor(s: string): { at: number; seq: number } | null {
  const m = /^(\d{1,16})\.(\d{1,16})$/.exec(s)
  return m ? { at: Number(m[1]), seq: Number(m[2]) } : null
}

/**
 * The identity a typed recipient is counted under (recipient-identity.ts):
 * a number without its spaces, dashes, dots and brackets, or an address.
 */
export function typedRecipient(typed: string): string | null {
  const t = typed.trim()
  if (t.includes('@')) return /^[^@\s]+@[^@\s]+$/.test(t) ? recipientIdentity('email', t) : null
  const digits = t.replace(/[\s().-]/g, '')
  return /^\+[1-9][0-9]{1,14}$/.test(digits) ? recipientIdentity('sms', digits) : null
}

export class ConsoleSearch {
  constructor(private readonly d: ConsoleSearchDeps) {}

  /** `by`: the operator searching; required to search by recipient (counted and audited as theirs). */
  async verifications(q: SearchQuery, by?: Actor): Promise<Found<SearchResult>> {
    const now = this.d.clock.now()
    const range = periodRange(q.period, now)
    const before = q.cursor === undefined ? null : decodeCursor(q.cursor)
    if (q.cursor !== undefined && before === null) return { ok: false, status: 400, error: "cursor is not valid: pass the 'next' of the previous page" }
    const identity = q.recipient === undefined ? null : typedRecipient(q.recipient)
    if (q.recipient !== undefined && identity === null) {
      return { ok: false, status: 400, error: 'recipient must be a phone number in E.164 form (+14155550123) or an email address' }
    }
    if (identity !== null) {
      const retryAfter = await this.admitRecipientSearch(q, identity, by, now)
      if (retryAfter !== null) return { ok: false, status: 429, error: recipientSearchesLimited(retryAfter), retryAfter }
    }
    return this.d.storage.read(async (r) => {
      const pick = await pickAccount(r, q.account)
      if (!pick.ok) return { ok: false as const, status: 404 as const, error: pick.error }
      const accounts = await r.admin.listAccounts()
      const names = new Map(accounts.map((a) => [a.id, a.name]))
      const view = (v: Verification): VerificationView => ({
        verification: v,
        account: names.get(v.accountId) ?? String(v.accountId),
        status: decideStatus(v, now, false),
      })
      const keep = (v: Verification) =>
        (pick.account === null || v.accountId === pick.account.id) &&
        (q.country === undefined || v.country === q.country) &&
        (q.status === undefined || decideStatus(v, now, false) === q.status) &&
        v.createdAt >= range.from &&
        v.createdAt < range.to
      const done = (rows: Verification[], next: { at: number; seq: number } | null, refusals?: RefusalView[]) => ({
        ok: true as const,
        value: { rows: rows.map(view), next: next === null ? null : encodeCursor(next), from: range.from, to: range.to, ...(refusals ? { refusals } : {}) },
      })

      if (q.id !== undefined) {
        const seq = this.d.seqOf(q.id)
        const v = seq === null ? undefined : await r.verifications.findById(q.id, seq)
        return done(v && keep(v) ? [v] : [], null)
      }
      if (identity !== null) {
        const searched = pick.account ? [pick.account] : accounts
        const page = await this.byRecipient(r, searched, identity, range, before, q.limit)
        const last = page.at(-1)
        // The refusals come with the first page only: the cursor pages verifications.
        const refused = before === null ? await this.refusalsOf(r, searched, identity, range, q.limit) : []
        const refusals = refused.map((e) => ({ send: e, account: names.get(e.accountId) ?? String(e.accountId) }))
        return done(page.filter(keep), page.length === q.limit && last ? { at: last.createdAt, seq: last.seq } : null, refusals)
      }
      const page = await r.stats.search({
        from: range.from,
        to: range.to,
        accountId: pick.account?.id ?? null,
        country: q.country ?? null,
        status: q.status ?? null,
        now,
        before,
        limit: q.limit,
        budget: SEARCH_BUDGET,
      })
      return done(page.rows, page.next)
    })
  }

  /**
   * Counts a search by recipient against the operator's window and writes
   * its audit entry (the kind of recipient, never the value); the seconds to
   * wait when the window is full. No operator, no search.
   */
  private admitRecipientSearch(q: SearchQuery, identity: string, by: Actor | undefined, now: number): Promise<number | null> {
    if (by === undefined) throw new Error('a search by recipient needs the operator who makes it')
    const scope = this.d.hasher.digest('console-recipient-search', `${by.source}:${by.operator}`)
    return this.d.storage.write(async (r) => {
      const wait = await windowFull(r, scope, RECIPIENT_SEARCHES_PER_HOUR, RECIPIENT_SEARCH_WINDOW_MS, now)
      if (wait !== null) return wait
      await r.operators.recordAttempt(scope, now)
      const details = { account: q.account ?? null, recipient: identity.includes('@') ? 'email address' : 'number', period: q.period }
      await audit(r, by, now, 'recipient.searched', 'verifications', details)
      return null
    })
  }

  /** A recipient's newest verifications in the accounts searched: one look-up per account, since the hash is keyed by account (send.ts). */
  private async byRecipient(
    r: Repos,
    accounts: { id: number }[],
    identity: string,
    range: { from: number; to: number },
    before: { at: number; seq: number } | null,
    limit: number,
  ): Promise<Verification[]> {
    const rows: Verification[] = []
    for (const a of accounts) {
      const hash = this.recipientHash(a.id, identity)
      rows.push(...(await r.stats.byRecipient(hash, range.from, range.to, before, limit)))
    }
    rows.sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq)
    return rows.slice(0, limit)
  }

  /** A recipient's refused sends (`send.blocked`) in the accounts searched, newest first: found through the hash their events keep. */
  private async refusalsOf(r: Repos, accounts: { id: number }[], identity: string, range: { from: number; to: number }, limit: number): Promise<RefusedSend[]> {
    const rows: RefusedSend[] = []
    for (const a of accounts) rows.push(...(await r.stats.refusalsByRecipient(this.recipientHash(a.id, identity), range.from, range.to, limit)))
    rows.sort((a, b) => b.occurredAt - a.occurredAt)
    return rows.slice(0, limit)
  }

  private recipientHash(accountId: number, identity: string): Uint8Array {
    return this.d.hasher.digest(HASH_PURPOSE_RECIPIENT, `${accountId}:${identity}`).subarray(0, RECIPIENT_HASH_BYTES)
  }

  /** A verification and its timeline (its stored events, oldest first). */
  verification(id: string): Promise<Found<{ view: VerificationView; timeline: TimelineEvent[] }>> {
    const now = this.d.clock.now()
    const seq = this.d.seqOf(id)
    return this.d.storage.read(async (r) => {
      const v = seq === null ? undefined : await r.verifications.findById(id, seq)
      if (!v) return { ok: false as const, status: 404 as const, error: 'verification not found' }
      const account = (await r.admin.listAccounts()).find((a) => a.id === v.accountId)
      const timeline = await r.stats.timeline(v.seq, v.id)
      return {
        ok: true as const,
        value: { view: { verification: v, account: account?.name ?? String(v.accountId), status: decideStatus(v, now, false) }, timeline },
      }
    })
  }

  webhooks(q: {
    period: Period
    account?: string
    status?: EventDeliveryStatus
    before?: number
    limit: number
  }): Promise<Found<{ endpoints: EndpointRow[]; deliveries: DeliveryRow[]; next: number | null; accounts: Map<number, string> }>> {
    const range = periodRange(q.period, this.d.clock.now())
    return this.d.storage.read(async (r) => {
      const pick = await pickAccount(r, q.account)
      if (!pick.ok) return { ok: false as const, status: 404 as const, error: pick.error }
      const accounts = new Map((await r.admin.listAccounts()).map((a) => [a.id, a.name]))
      const endpoints = await r.webhooks.listEndpoints(pick.account?.id)
      const page = await r.stats.deliveries({
        from: range.from,
        accountId: pick.account?.id ?? null,
        status: q.status ?? null,
        before: q.before ?? null,
        limit: q.limit,
        budget: DELIVERY_BUDGET,
      })
      return { ok: true as const, value: { endpoints, deliveries: page.rows, next: page.next, accounts } }
    })
  }
}
