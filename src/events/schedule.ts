/**
 * The retry schedule of docs/api.md#events: 30 s after the first failed
 * try, doubling, each wait lengthened by up to 10 % (jitter, so receivers
 * that failed together are not all tried again at once), at most 1 h between
 * tries; no try starts more than 24 h after the first.
 */
export const FIRST_RETRY_MS = 30_000
export const MAX_RETRY_MS = 3_600_000
export const GIVE_UP_AFTER_MS = 86_400_000
export const JITTER = 0.1

/**
 * When to try again after `attempts` failed tries (1 = the first failed), or
 * null when that would be past 24 h from `firstAt`: the delivery has failed.
 * `random` is in [0, 1).
 */
export function nextTry(attempts: number, now: number, firstAt: number, random: number): number | null {
  const base = FIRST_RETRY_MS * 2 ** Math.min(attempts - 1, 30)
  const wait = Math.min(Math.round(base * (1 + JITTER * random)), MAX_RETRY_MS)
  const at = now + wait
  return at > firstAt + GIVE_UP_AFTER_MS ? null : at
}
