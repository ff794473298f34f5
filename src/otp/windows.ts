/**
 * Rolling-window arithmetic shared by every limit. An event at time `t` is in
 * the window of length `w` at time `now` while `now < t + w`.
 */
import type { EventLog } from './ports/index.ts'

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
