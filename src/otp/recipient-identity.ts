/**
 * The identity a recipient is counted under (docs/api.md#order-of-checks): the
 * per-recipient limits, the failure cap and the fraud guard's history key on it,
 * through the recipient hash; it is never stored in clear, and the code still
 * goes to the address as written. A phone counts by its E.164 form; an email
 * lower-cased, without a `+tag`, and for gmail.com and googlemail.com without
 * dots and under one domain: spellings that reach the same mailbox must not buy
 * more codes, more guesses, or a fresh history.
 */
import type { Channel } from './types.ts'

/** Domains whose mailboxes ignore the dots of the local part, and their one counted domain. */
const DOTLESS_DOMAINS: Record<string, string> = { 'gmail.com': 'gmail.com', 'googlemail.com': 'gmail.com' }

/**
 * `recipient` is valid for `channel`: an E.164 number, or an address with one
 * `@` (the WHATWG grammar of validation has no quoted local part).
 */
export function recipientIdentity(channel: Channel, recipient: string): string {
  if (channel !== 'email') return recipient
  const lower = recipient.toLowerCase()
  const at = lower.lastIndexOf('@')
  let local = lower.slice(0, at)
  let domain = lower.slice(at + 1)
  // From the first `+`: `ann+a+b@` is `ann@`. A local part that starts with `+`
  // counts as empty, which can only join addresses, never split one.
  const plus = local.indexOf('+')
  if (plus >= 0) local = local.slice(0, plus)
  const dotless = Object.hasOwn(DOTLESS_DOMAINS, domain) ? DOTLESS_DOMAINS[domain] : undefined
  if (dotless !== undefined) {
    local = local.replaceAll('.', '')
    domain = dotless
  }
  return `${local}@${domain}`
}
