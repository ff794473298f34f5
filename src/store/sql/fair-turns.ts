/**
 * The order in which a claim takes due deliveries
 * (docs/events.md#fair-turns-and-slow-endpoints), the same on every engine:
 * accounts take turns, and within an account its endpoints take turns, so an
 * account with a backlog, or with many endpoints, does not push another
 * account's deliveries back. In each round the account whose delivery has
 * waited longest goes first.
 */

/** A due delivery the claim may take: its key, its endpoint's account and when it became due. */
export interface Candidate {
  eventSeq: number
  endpointId: number
  accountId: number
  nextAt: number
}

/**
 * Up to `limit` of `candidates` in fair turns. `candidates` are each
 * endpoint's due deliveries, oldest first within an endpoint (as the
 * per-endpoint reads return them); the endpoint's limit is already applied.
 */
export function pickFair<C extends Candidate>(candidates: C[], limit: number): C[] {
  // Each account's queue: its endpoints' deliveries interleaved, one of each in turn.
  const byEndpoint = new Map<number, C[]>()
  for (const c of candidates) {
    const list = byEndpoint.get(c.endpointId)
    if (list === undefined) byEndpoint.set(c.endpointId, [c])
    else list.push(c)
  }
  const endpointsOf = new Map<number, C[][]>()
  for (const list of byEndpoint.values()) {
    const account = list[0]!.accountId
    const lists = endpointsOf.get(account)
    if (lists === undefined) endpointsOf.set(account, [list])
    else lists.push(list)
  }
  const queues = [...endpointsOf.values()].map(interleave)
  // Round r takes each account's r-th delivery, the longest waiting first.
  const picked: C[] = []
  for (let round = 0; picked.length < limit; round++) {
    const turn = queues.flatMap((q) => (round < q.length ? [q[round]!] : []))
    if (turn.length === 0) break
    turn.sort((a, b) => a.nextAt - b.nextAt || a.eventSeq - b.eventSeq || a.endpointId - b.endpointId)
    picked.push(...turn.slice(0, limit - picked.length))
  }
  return picked
}

/** One of each list in turn (the lists ordered by their first, longest waiting, delivery). */
function interleave<C extends Candidate>(lists: C[][]): C[] {
  lists.sort((a, b) => a[0]!.nextAt - b[0]!.nextAt || a[0]!.endpointId - b[0]!.endpointId)
  const total = lists.reduce((n, l) => n + l.length, 0)
  const out: C[] = []
  for (let i = 0; out.length < total; i++) for (const l of lists) if (i < l.length) out.push(l[i]!)
  return out
}
