/**
 * `server.listen` and `server.admin_listen`: HOST:PORT, where HOST is an IPv4
 * address, a bracketed IPv6 address or a host name, and PORT is from 1 to
 * 65535 (0 asks the system for a free port; the tests use it). Checked with
 * the config, so `otpd config check` refuses `256.1.1.1:80` instead of serve
 * failing to bind.
 */
import { isIPv4, isIPv6 } from 'node:net'

export function parseListen(listen: string): { hostname: string; port: number } {
  const m = /^(\[[^\]]*\]|[^:\s[\]]+):([0-9]{1,5})$/.exec(listen)
  if (!m) throw new Error(`'${listen}' is not HOST:PORT`)
  const host = m[1]!
  const port = Number(m[2])
  if (port > 65535) throw new Error(`port ${port} is out of range 1-65535`)
  if (host.startsWith('[')) {
    const v6 = host.slice(1, -1)
    if (!isIPv6(v6)) throw new Error(`'${v6}' is not an IPv6 address`)
    return { hostname: v6, port }
  }
  if (/^[0-9.]+$/.test(host)) {
    if (!isIPv4(host)) throw new Error(`'${host}' is not an IPv4 address`)
  } else if (!/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(host)) {
    throw new Error(`'${host}' is not a host name or address`)
  }
  return { hostname: host, port }
}

function checkListen(key: string, listen: unknown): string[] {
  if (typeof listen !== 'string') return [] // the schema reports the type
  try {
    parseListen(listen)
    return []
  } catch (err) {
    return [`${key} must be HOST:PORT such as 127.0.0.1:8080 (${(err as Error).message})`]
  }
}

export function checkListeners(server: { listen?: unknown; admin_listen?: unknown }): string[] {
  const problems = checkListen('server.listen', server.listen)
  if (server.admin_listen === undefined) return problems
  const admin = checkListen('server.admin_listen', server.admin_listen)
  problems.push(...admin)
  if (problems.length === 0 && server.admin_listen === server.listen && parseListen(server.listen as string).port !== 0) {
    problems.push('server.admin_listen must differ from server.listen (the admin listener is a second port)')
  }
  return problems
}

/** A bind failure as one sentence naming the address and the system's reason. */
export function bindError(what: string, listen: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code
  const why: Record<string, string> = {
    EADDRINUSE: 'the address is already in use (another otpd, or another program)',
    EADDRNOTAVAIL: 'no network interface of this machine has that address',
    EACCES: 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)',
    EINVAL: 'the address is not valid here',
    ENOTFOUND: 'the host name does not resolve',
  }
  const reason = (code && why[code]) ?? (err instanceof Error ? err.message : String(err))
  return new Error(`cannot listen on ${listen} (${what}): ${reason}${code ? ` [${code}]` : ''}`)
}
