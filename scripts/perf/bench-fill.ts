/**
 * scripts/bench --fill N: N verifications written through the API (wrk with
 * bench-fill.lua, in runs of at most 30 s until N sends have been answered),
 * and a sample of their ids taken evenly over the whole fill, so verify on
 * the filled database reads rows from all over the table, not only the newest.
 * The runs take the bench's keys in turn (the keys of both accounts, one with
 * a webhook endpoint), and the sample is kept per key: a verification answers
 * only to the key that sent it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { round1, type Proc } from './bench-proc.ts'
import { wrk, type LoadSettings } from './bench-load.ts'

export interface FillResult {
  /** Sends answered 200 (a few more may have been written: those in flight when a thread reached its quota). */
  verifications: number
  /** Sends wrk gave up on (5 s timeout) or could not make; a timed-out send may still have been written. */
  socket_errors: number
  seconds: number
  sends_per_s: number
  /** Database and WAL file sizes once the fill is over and the server has settled. */
  db_mb: number | null
  wal_mb: number | null
  /** Per key (the index in `keys`): sampled ids with the right code and for a wrong one; empty for a key no run took. */
  ok: string[][]
  wrong: string[][]
}

export async function fill(
  s: LoadSettings,
  server: Proc,
  dir: string,
  keys: string[],
  n: number,
  sample: number,
  log: (m: string) => void,
): Promise<FillResult> {
  const idsPrefix = (k: number) => join(dir, `fill-ids-k${k}`)
  const every = Math.max(1, Math.floor(n / sample))
  const t0 = performance.now()
  let done = 0
  let rate = 0
  let socketErrors = 0
  for (let chunk = 0; done < n; chunk++) {
    if (chunk > 99) throw new Error(`fill: ${done} of ${n} after 100 wrk runs`)
    const left = n - done
    // wrk runs as long as it is told even once every thread has stopped at its
    // quota: size each run by the rate so far (the first by a guess of 5000/s).
    const seconds = Math.min(rate > 0 ? 30 : 10, Math.max(2, Math.ceil(left / (rate || 5000)) + 1))
    const f = await wrk(s, 'bench-fill.lua', server.url, seconds, {
      BENCH_KEY: keys[chunk % keys.length]!,
      BENCH_FILL_CHUNK: String(chunk),
      BENCH_FILL_QUOTA: String(Math.ceil(left / s.threads)),
      BENCH_FILL_EVERY: String(every),
      BENCH_FILL_IDS: idsPrefix(chunk % keys.length),
    })
    const ok = f.statuses['200'] ?? 0
    if (ok !== f.requests) throw new Error(`fill: not every send answered 200: ${JSON.stringify(f.statuses)}`)
    // A send that timed out (wrk waits 5 s) may still have been written: counted as an error, not as filled.
    if (f.socket_errors > 0) log(`fill: ${f.socket_errors} socket errors (timeouts) in this run`)
    socketErrors += f.socket_errors
    done += ok
    rate = Math.max(rate, ok / seconds)
    log(`fill: ${done} of ${n} (${Math.round(ok / seconds)} sends/s)`)
  }
  const seconds = (performance.now() - t0) / 1000
  // Let the checkpoint worker catch up, as a server does once a burst ends,
  // then write the kernel's dirty pages out (about 1.5 GB after 5 million
  // sends): otherwise their writeback runs during the filled measurement and
  // takes CPU and disk from it, which measures the fill, not the database
  // it left (the empty run after it was 16-34 % slower than the one before).
  await Bun.sleep(5000)
  Bun.spawnSync(['sync'])
  await Bun.sleep(2000)
  const byKey = keys.map((_, k) => {
    const ids = readdirSync(dir)
      .filter((f) => f.startsWith(`fill-ids-k${k}.`))
      .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean))
    shuffle(ids)
    return ids
  })
  const size = (f: string) => {
    try {
      return round1(statSync(join(dir, f)).size / 1024 / 1024)
    } catch {
      return null
    }
  }
  return {
    verifications: done,
    socket_errors: socketErrors,
    seconds: round1(seconds),
    sends_per_s: Math.round(done / seconds),
    db_mb: size('otpd.db'),
    wal_mb: size('otpd.db-wal'),
    ok: byKey.map((ids) => ids.filter((_, i) => i % 2 === 0)),
    wrong: byKey.map((ids) => ids.filter((_, i) => i % 2 === 1)),
  }
}

function shuffle<T>(a: T[]): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[a[i], a[j]] = [a[j]!, a[i]!]
  }
}
