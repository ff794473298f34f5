/**
 * Rolling-window arithmetic shared by every limit. An event at time `t` is in
 * the window of length `w` at time `now` while `now < t + w`.
 */
import type { EventLog } from './ports/index.ts'
import type { Limits } from './types.ts'

/** Whole seconds until `ms` milliseconds have passed, rounded up (never 0 while waiting). */
export function secondsUntil(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000))
}

/**
 * Milliseconds until a window holding `times` (ascending, all inside it) has room
 * for one more event under `max`, or 0 when it has room now.
 */
export function waitForRoom(times: readonly number[], windowMs: number, max: number, now: number): number {
  if (times.length < max) return 0
  // Once the oldest (count - max + 1) events have left, count drops below max.
  const t = times[times.length - max]!
  return t + windowMs - now
}

/**
 * Same as waitForRoom, read from an EventLog with one look-up: the window is
 * full while the max-th most recent event is inside it, and has room once
 * that event leaves.
 */
export async function waitForRoomInLog<S>(log: EventLog<S>, subject: S, windowMs: number, max: number, now: number): Promise<number> {
  return waitWhileInWindow(await log.nthLatest(subject, max), windowMs, now)
}

/** Ms until the event at `t` leaves the window (0: it has left, or there is none). */
export function waitWhileInWindow(t: number | undefined, windowMs: number, now: number): number {
  return t === undefined || t + windowMs <= now ? 0 : t + windowMs - now
}

/** A recipient's send windows (docs/api.md#limits), each with its limit in the settings. */
const RECIPIENT_WINDOWS = [
  { ms: 60_000, period: 'minute', limit: (l: Limits) => l.recipientPerMinute },
  { ms: 3_600_000, period: 'hour', limit: (l: Limits) => l.recipientPerHour },
  { ms: 86_400_000, period: '24 hours', limit: (l: Limits) => l.recipientPerDay },
] as const

/** How far back a recipient's send times are read: the longest of its windows. */
export const RECIPIENT_LOOKBACK_MS = 86_400_000

/** A full send window: its limit, its name in the answer, and the whole seconds until it has room. */
export interface RecipientLimited {
  max: number
  period: string
  retryAfter: number
}

/**
 * Whether a recipient with sends at `times` (ascending, within the lookback)
 * may get one more at `now`: null, or the window that stays full the longest
 * (the first of them on a tie).
 */
export function recipientWindowVerdict(times: readonly number[], limits: Limits, now: number): RecipientLimited | null {
  let worst: { max: number; period: string; wait: number } | null = null
  for (const w of RECIPIENT_WINDOWS) {
    const max = w.limit(limits)
    const inWindow = times.filter((t) => t > now - w.ms)
    const wait = waitForRoom(inWindow, w.ms, max, now)
    if (wait > 0 && (worst === null || wait > worst.wait)) worst = { max, period: w.period, wait }
  }
  return worst && { max: worst.max, period: worst.period, retryAfter: secondsUntil(worst.wait) }
}
