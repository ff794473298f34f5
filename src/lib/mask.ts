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
