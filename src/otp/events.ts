/**
 * Events (docs/api.md#events), the domain side: what an event says and
 * when it is written. Every event is added to the outbox (ports/events.ts
 * EventOutbox) inside the write transaction of the change it reports, so it
 * commits or rolls back with that change; delivery happens later
 * (events/dispatcher.ts).
 */
import type { Clock } from '../lib/clock.ts'
import type { EventType, NewEvent, Repos, Storage, VerificationStatus } from './ports/index.ts'
import { decideStatus } from './status.ts'
import type { Verification } from './types.ts'

export const EVENT_TYPES: readonly EventType[] = [
  'verification.sent',
  'verification.delivered',
  'verification.undelivered',
  'verification.delivery_failed',
  'verification.approved',
  'verification.attempt_failed',
  'verification.locked',
  'verification.expired',
  'verification.canceled',
  'verification.fallback',
  'send.blocked',
]

/**
 * The status (docs/api.md#verification-status) of a verification as this row shows it at `now`
 * (status.ts), without the recipient-wide lockout (docs/api.md#hardening): verify
 * passes `locked` itself when a failure fills that cap. Other events about a
 * verification of a recipient already capped still say `pending` (not
 * looked up on every send).
 */
export function statusAt(v: Verification, now: number): VerificationStatus {
  return decideStatus(v, now, false)
}

/** Adds an event about `v` (the row after the change) to the outbox of the running transaction. */
export function emit(r: Repos, type: EventType, v: Verification, at: number, extra: NewEvent['extra'] = {}, status?: VerificationStatus): Promise<void> {
  return r.events.add({ type, accountId: v.accountId, at, verification: v, status: status ?? statusAt(v, at), extra })
}

/**
 * The exact JSON body of an event. The engines call it from `add`, once they
 * know the id, the account's name and the sequence number. `extra` comes
 * last: `send.blocked` may name its channel and recipient there, having no
 * verification.
 */
export function eventBody(e: NewEvent, id: string, account: string, sequence: number): string {
  const v = e.verification
  return JSON.stringify({
    id,
    type: e.type,
    occurred_at: new Date(e.at).toISOString(),
    account,
    data: {
      verification_id: v?.id ?? null,
      channel: v?.channel ?? null,
      recipient: v?.recipientMask ?? null,
      status: e.status,
      sequence,
      test: v !== null && v.testMode !== null,
      // A hook's delivery names the hook whose identity server checks the code (docs/integrations.md#what-otpd-records).
      ...(v?.checkedBy === undefined ? {} : { checked_by: v.checkedBy }),
      ...e.extra,
    },
  })
}

/**
 * Each scan looks this far behind its cursor too: a verification written by a
 * node whose clock is a little behind, or in the same millisecond as the
 * last scan, still has its expiry reported (the event check drops repeats).
 */
const LOOK_BACK_MS = 60_000
/** How many expiries one transaction reports: a short write, even after a long stop. */
const EXPIRY_PAGE = 500

/**
 * Writes `verification.expired` for every verification that expired unused since
 * the last scan (serve runs it every 30 s). Exactly once: the cursor moves in the
 * transaction that writes the events, and one that already has its event is
 * skipped (a scan looks a minute behind the cursor). The first scan starts at
 * its own time. Returns how many events it wrote.
 */
export async function reportExpired(storage: Storage, clock: Clock): Promise<number> {
  let total = 0
  for (;;) {
    const { written, more } = await storage.write(async (r) => {
      const now = clock.now()
      const from = await r.events.expiryCursor()
      if (from === null) {
        await r.events.setExpiryCursor(now)
        return { written: 0, more: false }
      }
      const due = await r.events.expiredUnreported(from - LOOK_BACK_MS, now, EXPIRY_PAGE)
      for (const v of due) await emit(r, 'verification.expired', v, now, {}, 'expired')
      const more = due.length === EXPIRY_PAGE
      // A full page: the next one starts just before the last expiry seen, so
      // rows sharing that millisecond are not skipped (the event check drops repeats).
      await r.events.setExpiryCursor(more ? due.at(-1)!.expiresAt - 1 : Math.max(now, from))
      return { written: due.length, more }
    })
    total += written
    if (!more) return total
  }
}
