/**
 * The admin listener answers only to its own names (docs/configuration.md#server):
 * a DNS-rebinding page, served from a name that an attacker then points at
 * the listener's address, sends that name in `Host`, so refusing names not
 * configured keeps it from reading /metrics or driving the console from an
 * operator's browser. An address literal names no DNS record to rebind, so
 * it is always accepted.
 */
import { isIP } from 'node:net'

/** The host names the admin listener answers to: loopback's, the listen address's, and `server.admin_allowed_hosts`. */
export function adminHostNames(listenHost: string, configured: readonly string[] = []): Set<string> {
  return new Set(['localhost', listenHost, ...configured].map(normalHost))
}

function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '')
}

/** The name a request's `Host` gives, without its port or IPv6 brackets ('' when it has none). */
export function hostNameOf(request: Request): string {
  const host = request.headers.get('host') ?? new URL(request.url).host
  const bare = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.split(':')[0]!
  return normalHost(bare)
}

/** Whether the listener answers a request with this `Host` name. */
export function hostAllowed(name: string, allowed: ReadonlySet<string>): boolean {
  return isIP(name) !== 0 || allowed.has(name)
}
