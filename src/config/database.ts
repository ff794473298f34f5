/**
 * Cross-field rules of `[database]` and the server secret, as sentences, and the
 * PostgreSQL connection they describe (docs/multi-node.md#configuration):
 * - `database.url` selects PostgreSQL, and every node must then share one server
 *   secret (`server.secret`, `secret_env` or `secret_file`, at most one of them):
 *   a secret generated beside a SQLite file would differ on every node;
 * - a variable named by `secret_env` or `password_env` must be set.
 * The password, user, host, port and database fall back to PG* variables as
 * libpq's do; a host that starts with `/` names a unix socket directory.
 */
import type { Config } from './schema.ts'

type Env = Record<string, string | undefined>

export const SECRET_SOURCES = ['server.secret', 'server.secret_env', 'server.secret_file'] as const

export function checkDatabase(config: Config, valid: (section: string) => boolean, env: Env): string[] {
  const problems: string[] = []
  const server = valid('server') ? config.server : undefined
  const db = valid('database') ? config.database : undefined
  if (server) {
    const given = SECRET_SOURCES.filter((k) => server[k.slice('server.'.length) as 'secret'] !== undefined)
    if (given.length > 1) problems.push(`${given.join(' and ')} are both set: give the server secret one way only`)
    if (server.secret_env !== undefined) {
      const value = env[server.secret_env]
      if (value === undefined || value === '') problems.push(`server.secret_env names ${server.secret_env}, which is not set`)
      else if (value.length < 32) problems.push(`server.secret_env names ${server.secret_env}, whose value is shorter than 32 characters`)
    }
    if (db?.url !== undefined && given.length === 0) {
      problems.push(
        'database.url selects PostgreSQL, where every node must use the same server secret: set server.secret, server.secret_env or server.secret_file (a copy of the otpd.secret file works)',
      )
    }
  }
  if (db?.url !== undefined) {
    try {
      const host = new URL(db.url).searchParams.get('host')
      if (host !== null && !host.startsWith('/'))
        problems.push(`database.url's host parameter must be a socket directory starting with / (such as /var/run/postgresql), not '${host}'`)
    } catch {
      problems.push('database.url is not a valid URL (postgres://user@host:5432/database)')
    }
  }
  if (db?.password_env !== undefined) {
    if (db.url === undefined) problems.push('database.password_env is set but database.url is not: the password is for PostgreSQL')
    const value = env[db.password_env]
    if (value === undefined || value === '') problems.push(`database.password_env names ${db.password_env}, which is not set`)
  }
  return problems
}

export interface PgConnection {
  hostname: string
  port: number
  /** The unix socket's path when the host is a directory (hostname is then 'localhost'). */
  socket: string | undefined
  username: string
  password: string | undefined
  database: string
  /** The URL without its password, for messages and logs. */
  display: string
}

/** Where to connect, from a checked config and the environment. */
export function pgConnection(db: Config['database'], env: Env): PgConnection {
  const u = new URL(db.url!)
  const host = u.searchParams.get('host') || decodeURIComponent(u.hostname.replace(/^\[|\]$/g, '')) || env.PGHOST || 'localhost'
  const port = Number(u.port || env.PGPORT || 5432)
  const username = decodeURIComponent(u.username) || env.PGUSER || 'postgres'
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || env.PGDATABASE || username
  const fromEnv = db.password_env !== undefined ? env[db.password_env] : undefined
  const password = fromEnv ?? (u.password ? decodeURIComponent(u.password) : env.PGPASSWORD || undefined)
  const socketDir = host.startsWith('/') ? host.replace(/\/+$/, '') : undefined
  const hostname = socketDir === undefined ? host : 'localhost'
  const where = socketDir === undefined ? (hostname.includes(':') ? `[${hostname}]` : hostname) : 'localhost'
  const display = `postgres://${encodeURIComponent(username)}@${where}:${port}/${encodeURIComponent(database)}${socketDir === undefined ? '' : `?host=${socketDir}`}`
  return { hostname, port, socket: socketDir === undefined ? undefined : `${socketDir}/.s.PGSQL.${port}`, username, password, database, display }
}
