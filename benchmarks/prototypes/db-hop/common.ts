/**
 * Throw-away prototype (BENCHMARKS.md, eighth and tenth rounds): the same
 * per-request database work on the request thread (single.ts, single-full.ts)
 * or on a database thread fed through shared memory (hop*.ts). SPIN_US adds
 * that many microseconds of busy work per request on the database side,
 * SPIN_HTTP_US on the request thread, standing in for otpd's own work there.
 */
import { Database } from 'bun:sqlite'
export const ROWS = 100_000
const SPIN_US = Number(process.env.SPIN_US ?? 0)
const SPIN_HTTP_US = Number(process.env.SPIN_HTTP_US ?? 0)
/**
 * Busy work is a fixed amount of computation, not a wall-clock wait: a thread
 * that is preempted takes longer, as real work would. ITERS_PER_US is
 * calibrated once per process (about 20 ms, on an otherwise idle thread).
 */
let sink = 0
function work(iters: number) {
  let x = sink
  for (let i = 0; i < iters; i++) x = (x * 1103515245 + 12345) | 0
  sink = x
}
const ITERS_PER_US = (() => {
  work(200_000)
  const n = 2_000_000
  const t = performance.now()
  work(n)
  return n / ((performance.now() - t) * 1000)
})()
export function busy(us: number) {
  if (us > 0) work(Math.round(us * ITERS_PER_US))
}
/** HTTP-side busy work per request (auth, validation, log line stand-in). */
export function spinHttp() { busy(SPIN_HTTP_US) }
export function openDb(path: string) {
  const db = new Database(path)
  db.run('PRAGMA busy_timeout = 5000')
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  // No checkpoints: they would land inside some COMMIT and blur the comparison (the WAL just grows for the run).
  db.run('PRAGMA wal_autocheckpoint = 0')
  return db
}
export function setup(path: string) {
  const db = openDb(path)
  db.run('CREATE TABLE IF NOT EXISTS v (seq INTEGER PRIMARY KEY, id TEXT, code_hash BLOB, attempts INTEGER, used_at INTEGER)')
  db.run('CREATE TABLE IF NOT EXISTS hits (key_id INTEGER, seq INTEGER, at INTEGER)')
  db.run('CREATE UNIQUE INDEX IF NOT EXISTS hits_k ON hits (key_id, seq)')
  const n = (db.query('SELECT count(*) AS n FROM v').get() as { n: number }).n
  if (n === 0) {
    const ins = db.prepare('INSERT INTO v (seq, id, code_hash, attempts, used_at) VALUES (?, ?, ?, 0, NULL)')
    db.transaction(() => { for (let i = 1; i <= ROWS; i++) ins.run(i, crypto.randomUUID(), new Uint8Array(32)) })()
  }
  db.close()
}
/** The per-request work: a key hit, a row look-up, an update for a wrong code. */
export function makeOps(db: Database) {
  const hit = db.prepare('INSERT INTO hits (key_id, seq, at) VALUES (1, ?, ?)')
  const find = db.prepare<{ seq: number; id: string; code_hash: Uint8Array; attempts: number; used_at: number | null }, [number]>('SELECT seq, id, code_hash, attempts, used_at FROM v WHERE seq = ?')
  const upd = db.prepare('UPDATE v SET attempts = ? WHERE seq = ?')
  const begin = db.prepare('BEGIN IMMEDIATE'), commit = db.prepare('COMMIT')
  let hseq = (db.query('SELECT max(seq) AS m FROM hits').get() as { m: number | null }).m ?? 0
  return {
    begin: () => begin.run(),
    commit: () => commit.run(),
    one(seq: number, code: number): number {
      busy(SPIN_US)
      hit.run(++hseq, Date.now())
      const r = find.get(seq)
      if (!r) return 404
      if (code % 3 === 1) { upd.run(r.attempts + 1, seq); return 1 }
      return 0
    },
  }
}
export const answer = (r: number) => new Response(JSON.stringify({ success: true, verified: r === 0, message: r === 0 ? 'Code verified' : r === 404 ? 'Verification not found' : 'Invalid code', request_id: crypto.randomUUID() }), { status: r === 404 ? 404 : 200, headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'x' } })
