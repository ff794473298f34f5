/**
 * The database part of a raw config that names a harness's own database:
 * for a test that reloads (or builds) a config on either engine. On
 * PostgreSQL it carries the URL and the server secret too (both need a
 * restart, so a reload must keep them).
 */
import type { Harness } from './harness.ts'

export function sameDatabase(h: Harness): { database: Record<string, unknown>; server: Record<string, unknown> } {
  if (h.databaseUrl === undefined) return { database: { path: h.dbPath }, server: {} }
  return { database: { path: h.dbPath, url: h.databaseUrl }, server: { secret: h.server.config.server.secret } }
}
