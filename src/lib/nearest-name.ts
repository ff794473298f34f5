/**
 * "Did you mean …?" for a name that matches nothing: the nearest of the known
 * names by edit distance, when it is close enough to be a typo. One rule for
 * every place otpd suggests a name (config keys, OTPD_ variables, provider
 * keys), so they never disagree.
 */

/** Edits (insert, delete, replace) at most this many: further off is another word, not a typo. */
export const MAX_TYPO_EDITS = 3

/** Levenshtein distance. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]!
}

/** The nearest known name (the first of equals), or undefined when none is within MAX_TYPO_EDITS. */
export function nearestName(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestD = Infinity
  for (const n of known) {
    const d = editDistance(name, n)
    if (d < bestD) [best, bestD] = [n, d]
  }
  return bestD <= MAX_TYPO_EDITS ? best : undefined
}

/** ` (did you mean X?)` for the nearest known name, or '' when none is near. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const near = nearestName(name, known)
  return near === undefined ? '' : ` (did you mean ${near}?)`
}
