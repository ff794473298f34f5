/**
 * Recipient masking for logs (docs/api.md#errors): `+1555****001`,
 * `s*****s@otpd.test`. Enough to recognise a recipient, not to recover it.
 */
export function maskRecipient(recipient: string): string {
  const at = recipient.lastIndexOf('@')
  if (at >= 0) {
    const local = recipient.slice(0, at)
    const domain = recipient.slice(at)
    const masked = local.length <= 2 ? '*'.repeat(local.length) : local[0] + '*'.repeat(local.length - 2) + local.at(-1)
    return masked + domain
  }
  if (recipient.length >= 9) return recipient.slice(0, 5) + '*'.repeat(recipient.length - 8) + recipient.slice(-3)
  return recipient.slice(0, 2) + '*'.repeat(Math.max(recipient.length - 2, 0))
}

/**
 * What the console shows of a stored mask (docs/console.md#verifications):
 * less than the API's, since an operator can also search by a full number,
 * and a mask that leaves few digits hidden would make a search an oracle.
 * A number keeps only `+` and its last two digits (at least 4 digits of any
 * E.164 number stay hidden, more than the country gives away); an address
 * its first character and its domain, not the local part's length.
 */
export function consoleMask(mask: string): string {
  const at = mask.lastIndexOf('@')
  if (at >= 0) return `${mask.slice(0, at > 0 ? 1 : 0)}***${mask.slice(at)}`
  if (mask.startsWith('+')) return `+${'*'.repeat(Math.max(mask.length - 3, 0))}${mask.slice(Math.max(mask.length - 2, 1))}`
  return '*'.repeat(mask.length)
}
