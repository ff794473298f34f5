#!/usr/bin/env bun
/**
 * Which PostgreSQL client the engine uses (store/pg/client.ts): Bun's built-in
 * `SQL` or the `postgres` package, measured on otpd's own shape of work in one
 * run, on one database, with the same pool size and concurrency:
 *
 * - `txn`: a write transaction as send and verify make it (BEGIN; a row lock
 *   with SELECT ... FOR UPDATE; an INSERT; a guarded UPDATE; COMMIT);
 * - `read`: a point read by primary key, as authentication does.
 *
 * Usage: bun scripts/bench-pg-client.ts postgres://user@host:port/db [--txns 4000] [--reads 20000]
 * It creates and drops its own tables (bench_pg_client_*). Prints each
 * client's rate and the ratio Bun SQL / postgres.
 */
import { SQL } from 'bun'
import postgres from 'postgres'

const url = process.argv[2]
if (!url?.startsWith('postgres')) {
  console.error('usage: bun scripts/bench-pg-client.ts postgres://user@host:port/db [--txns N] [--reads N]')
  process.exit(2)
}
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : def
}
const TXNS = arg('--txns', 4000)
const READS = arg('--reads', 20000)
const POOL = 10
const CONCURRENCY = 64
const ROWS = 200

/** The part of both clients this bench uses (they share the API shape). */
interface Client {
  unsafe(text: string, params?: unknown[]): Promise<unknown[]>
  begin<T>(fn: (tx: Client) => Promise<T>): Promise<T>
  close(): Promise<void>
}

const bun = (): Client => {
  const sql = new SQL({ url, max: POOL })
  return {
    unsafe: (t, p) => sql.unsafe(t, p as unknown[]),
    begin: (fn) =>
      sql.begin((tx) =>
        fn({ unsafe: (t, p) => tx.unsafe(t, p as unknown[]), begin: () => Promise.reject(new Error('nested')), close: async () => {} }),
      ) as never,
    close: () => sql.close(),
  }
}
const pgjs = (): Client => {
  const sql = postgres(url, { max: POOL, onnotice: () => {} })
  return {
    unsafe: (t, p) => sql.unsafe(t, p as never[]) as Promise<unknown[]>,
    begin: (fn) =>
      sql.begin((tx) =>
        fn({ unsafe: (t, p) => tx.unsafe(t, p as never[]) as Promise<unknown[]>, begin: () => Promise.reject(new Error('nested')), close: async () => {} }),
      ) as never,
    close: () => sql.end(),
  }
}

async function setUp(c: Client): Promise<void> {
  await c.unsafe('DROP TABLE IF EXISTS bench_pg_client_rows, bench_pg_client_log')
  await c.unsafe('CREATE TABLE bench_pg_client_rows (id integer PRIMARY KEY, balance bigint NOT NULL, name text NOT NULL)')
  await c.unsafe('CREATE TABLE bench_pg_client_log (id bigserial PRIMARY KEY, row_id integer NOT NULL, at bigint NOT NULL, hash bytea NOT NULL)')
  await c.unsafe(`INSERT INTO bench_pg_client_rows SELECT g, 1000000000, 'row' || g FROM generate_series(1, ${ROWS}) g`)
}

/** Runs `n` operations with CONCURRENCY in flight; returns operations per second. */
async function rate(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await op(next++)
    }),
  )
  return n / ((performance.now() - start) / 1000)
}

const hash = new Uint8Array(16).fill(7)
async function measure(name: string, make: () => Client): Promise<{ txn: number; read: number }> {
  const c = make()
  // Warm the pool and the plans.
  await rate(500, (i) => c.unsafe('SELECT balance FROM bench_pg_client_rows WHERE id = $1', [(i % ROWS) + 1]))
  const txn = await rate(TXNS, (i) =>
    c.begin(async (tx) => {
      const id = (i % ROWS) + 1
      await tx.unsafe('SELECT id FROM bench_pg_client_rows WHERE id = $1 FOR UPDATE', [id])
      await tx.unsafe('INSERT INTO bench_pg_client_log (row_id, at, hash) VALUES ($1, $2, $3)', [id, Date.now(), hash])
      await tx.unsafe('UPDATE bench_pg_client_rows SET balance = balance - 1 WHERE id = $1 AND balance >= 1', [id])
    }),
  )
  const read = await rate(READS, (i) => c.unsafe('SELECT id, balance, name FROM bench_pg_client_rows WHERE id = $1', [(i % ROWS) + 1]))
  await c.close()
  console.log(`${name.padEnd(12)} txn ${txn.toFixed(0).padStart(7)}/s   read ${read.toFixed(0).padStart(7)}/s`)
  return { txn, read }
}

const admin = bun()
await setUp(admin)
// Alternating order, twice each, the best of two: neither client gets only a cold or a warm server.
const results = { bun: [] as { txn: number; read: number }[], pgjs: [] as { txn: number; read: number }[] }
for (let round = 0; round < 2; round++) {
  if (round % 2 === 0) {
    results.bun.push(await measure('bun SQL', bun))
    results.pgjs.push(await measure('postgres', pgjs))
  } else {
    results.pgjs.push(await measure('postgres', pgjs))
    results.bun.push(await measure('bun SQL', bun))
  }
}
const best = (xs: { txn: number; read: number }[], k: 'txn' | 'read') => Math.max(...xs.map((x) => x[k]))
console.log(
  `ratio bun SQL / postgres: txn ${(best(results.bun, 'txn') / best(results.pgjs, 'txn')).toFixed(2)}, read ${(best(results.bun, 'read') / best(results.pgjs, 'read')).toFixed(2)}` +
    ` (pool ${POOL}, ${CONCURRENCY} in flight, best of 2)`,
)
await admin.unsafe('DROP TABLE IF EXISTS bench_pg_client_rows, bench_pg_client_log')
await admin.close()
