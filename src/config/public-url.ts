/**
 * `server.public_url`: the address vendors reach this server at, which turns
 * delivery receipts on (docs/api.md#delivery-receipts). Receipt URLs, and the URL
 * Twilio's signature covers, are built from it, never from a request's Host
 * header. A path is allowed (a reverse proxy that serves otpd under a prefix
 * and strips it); a query, fragment or credentials are not.
 */
export function checkPublicUrl(server: { public_url?: unknown }): string[] {
  const v = server.public_url
  if (v === undefined || typeof v !== 'string') return []
  const wrong = [
    `server.public_url must be an http:// or https:// URL with no query, fragment or credentials, such as "https://otp.example.com" (got ${JSON.stringify(v)})`,
  ]
  let u: URL
  try {
    u = new URL(v)
  } catch {
    return wrong
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password || u.search || u.hash || v.includes('?') || v.includes('#')) return wrong
  return []
}

/** The URL receipts are built from: no trailing slash, so `<public_url>/api/v1/receipts/NAME` has one. */
export function publicUrlBase(publicUrl: string | undefined): string | undefined {
  return publicUrl?.replace(/\/+$/, '')
}
