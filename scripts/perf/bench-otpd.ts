/**
 * An otpd binary under scripts/bench: its bench config, a fresh database
 * seeded the same way for every binary (a key and 10^9 credits through the
 * CLI, then 2 x `seed` verifications with the code 123456 through the API),
 * and the cold start.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanEnv, freePort, pinned, startServer, type Proc } from './bench-proc.ts'

export type Mode = 'FULL' | 'NORMAL'

/** Where and how the servers run. */
export interface OtpdSettings {
  scratch: string
  serverCpus: string | undefined
  metricsToken: string
  seed: number
}

/** A running otpd on its own database, with the key and the seeded ids the Lua scripts read. */
export interface Seeded {
  dir: string
  server: Proc
  /** BENCH_KEY, BENCH_IDS_OK, BENCH_IDS_WRONG for the Lua scripts. */
  env: Record<string, string>
}

export function otpdCli(binary: string, args: string[], configFile: string, cwd: string): string {
  const p = Bun.spawnSync([binary, ...args, '--config', configFile], { cwd, env: cleanEnv() })
  if (p.exitCode !== 0) throw new Error(`${binary} ${args.join(' ')}: ${p.stderr.toString()}`)
  return p.stdout.toString()
}

const helpTexts = new Map<string, string>()
/** Whether `binary` has the top-level command `name` (`--help`, read once per binary). */
function hasCommand(binary: string, name: string): boolean {
  let help = helpTexts.get(binary)
  if (help === undefined) {
    help = Bun.spawnSync([binary, '--help'], { env: cleanEnv() }).stdout.toString()
    helpTexts.set(binary, help)
  }
  return new RegExp(`^\\s+${name}\\b`, 'm').test(help)
}
const initFlags = new Map<string, string[]>()
/** `--init` where `binary` needs it to create the database before the first `serve` (a reference from before has no such flag). */
export function initArgs(binary: string): string[] {
  let flags = initFlags.get(binary)
  if (flags === undefined) {
    const help = Bun.spawnSync([binary, 'keys', 'create', '--help'], { env: cleanEnv() }).stdout.toString()
    flags = help.includes('--init') ? ['--init'] : []
    initFlags.set(binary, flags)
  }
  return flags
}
/** Whether `binary` has the fraud guard (a reference from before it refuses the `[fraud]` table). */
const knowsFraud = (binary: string) => hasCommand(binary, 'fraud')
/** Whether `binary` has webhook endpoints (a reference from before events has not). */
const knowsWebhooks = (binary: string) => hasCommand(binary, 'webhooks')

/**
 * `scripts/bench --features-off`: the fraud guard `off` and no webhook
 * endpoint on either account, for the proof that a feature switched off costs
 * nothing (docs/benchmarks.md#a-feature-that-is-off).
 */
export const features = { off: false }

/**
 * The recipients the send load spreads over (bench-send.lua, BENCH_NUMBERS):
 * valid mobile numbers of six countries, each a prefix and the count of digits
 * a request fills in. checkNumberTemplates proves them valid before a run.
 */
export const NUMBER_TEMPLATES: { prefix: string; digits: number; country: string }[] = [
  { prefix: '+14155', digits: 6, country: 'US' },
  { prefix: '+44740', digits: 7, country: 'GB' },
  { prefix: '+49151', digits: 8, country: 'DE' },
  { prefix: '+336', digits: 8, country: 'FR' },
  { prefix: '+55119', digits: 8, country: 'BR' },
  { prefix: '+9198', digits: 8, country: 'IN' },
]

/** Every template, filled with random digits, is a valid number of its country (libphonenumber-js, as otpd reads it). */
export async function checkNumberTemplates(): Promise<string> {
  const { parsePhoneNumberFromString } = await import('libphonenumber-js')
  for (const t of NUMBER_TEMPLATES) {
    for (let i = 0; i < 200; i++) {
      const n = t.prefix + String(Math.floor(Math.random() * 10 ** t.digits)).padStart(t.digits, '0')
      const p = parsePhoneNumberFromString(n)
      if (!p?.isValid() || p.country !== t.country) throw new Error(`bench: ${n} is not a valid ${t.country} number (NUMBER_TEMPLATES)`)
    }
  }
  return NUMBER_TEMPLATES.map((t) => `${t.prefix}:${t.digits}`).join(',')
}

/** The account without a webhook endpoint; the default account has one (startSeeded). */
export const QUIET_ACCOUNT = 'bench-quiet'

let receiver: string | undefined
let received = 0
/** Events the bench's receiver took, over the whole run (the report prints it: the endpoints were really fed). */
export const eventsReceived = () => received
/** Where the bench's webhook endpoint points: a loopback server in this process that answers 204 to every event. */
function eventReceiver(): string {
  if (receiver === undefined) {
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        received++
        return new Response(null, { status: 204 })
      },
    })
    server.unref()
    receiver = `http://127.0.0.1:${server.port}/events`
  }
  return receiver
}

/**
 * Limits raised out of the way and every channel on a noop provider: the bench
 * measures otpd, not a vendor. The fraud guard runs in `monitor` where
 * `binary` has one: every rule is evaluated and recorded, nothing refused. The database is a SQLite file in
 * `dir` with `synchronous`, or the given `[server]` and `[database]` lines
 * (PostgreSQL, bench-pg.ts).
 */
export function benchConfig(
  dir: string,
  synchronous: Mode,
  metricsToken: string,
  binary: string,
  db: { server: string; database: string } = { server: '', database: `path = "${join(dir, 'otpd.db')}"\nsynchronous = "${synchronous}"` },
): string {
  const file = join(dir, 'otp.config.toml')
  const fraud = knowsFraud(binary) ? `[fraud]\nmode = "${features.off ? 'off' : 'monitor'}"\n` : ''
  const big = 1_000_000_000
  writeFileSync(
    file,
    `[server]
metrics_token = "${metricsToken}"
${db.server}
[database]
${db.database}

[limits]
key_requests_per_minute = ${big}
recipient_per_minute = ${big}
recipient_per_hour = ${big}
recipient_per_day = ${big}
max_failed_attempts = ${big}
recipient_failures_per_day = ${big}

${fraud}
[channels]
sms = ["bench"]
email = ["bench"]
voice = ["bench"]

[providers.bench]
type = "noop"
`,
  )
  return file
}

/** Verifications with the code 123456 (custom code), to distinct recipients, through the API. */
export async function seedVerifications(url: string, key: string, n: number, tag: number): Promise<string[]> {
  const ids: string[] = []
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      const r = await fetch(`${url}/api/v1/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'sms', recipient: `+1${tag}8${String(i).padStart(9, '0')}`, code: '123456', expires_in: 3600 }),
      })
      const j = (await r.json()) as { verification_id?: string }
      if (r.status !== 200 || !j.verification_id) throw new Error(`seed send answered ${r.status}: ${JSON.stringify(j)}`)
      ids.push(j.verification_id)
    }
  }
  await Promise.all(Array.from({ length: 32 }, worker))
  return ids
}

/** Writes the two id pools the verify script reads (correct code / wrong code). */
export function writeIdPools(dir: string, ok: string[], wrong: string[], suffix = ''): { BENCH_IDS_OK: string; BENCH_IDS_WRONG: string } {
  const env = { BENCH_IDS_OK: join(dir, `ids-ok.txt${suffix}`), BENCH_IDS_WRONG: join(dir, `ids-wrong.txt${suffix}`) }
  writeFileSync(env.BENCH_IDS_OK, ok.join('\n') + '\n')
  writeFileSync(env.BENCH_IDS_WRONG, wrong.join('\n') + '\n')
  return env
}

/**
 * The id pools of key `index` of `count`, named as the Lua scripts read them
 * (one key: no suffix; several: `.<index>`). Returns the environment that
 * names the pools (the names without the suffix), from key 0 only.
 */
export function writeKeyIdPools(dir: string, index: number, count: number, ok: string[], wrong: string[]): Record<string, string> {
  const pools = writeIdPools(dir, ok, wrong, count > 1 ? `.${index}` : '')
  return index === 0 ? { BENCH_IDS_OK: pools.BENCH_IDS_OK.replace(/\.0$/, ''), BENCH_IDS_WRONG: pools.BENCH_IDS_WRONG.replace(/\.0$/, '') } : {}
}

/**
 * The accounts, credits and keys of a bench database, through the CLI. Half
 * of the accounts have a webhook endpoint (where `binary` has them; none
 * with --features-off): `keys`
 * keys on each of the two, in turn, and every request takes the next
 * (BENCH_ROTATE). Returns the keys and the Lua scripts' environment for them.
 */
export async function setUpAccounts(binary: string, configFile: string, dir: string, keys: number): Promise<{ keys: string[]; env: Record<string, string> }> {
  const hooks = knowsWebhooks(binary)
  const key = (account: string) =>
    JSON.parse(otpdCli(binary, ['keys', 'create', ...initArgs(binary), '--name', 'bench', '--account', account, '--json'], configFile, dir)).key as string
  if (hooks) {
    otpdCli(binary, ['accounts', 'create', ...initArgs(binary), QUIET_ACCOUNT], configFile, dir)
    otpdCli(binary, ['credits', 'add', '1000000000', '--account', QUIET_ACCOUNT], configFile, dir)
    if (!features.off) otpdCli(binary, ['webhooks', 'add', '--url', eventReceiver(), '--account', 'default'], configFile, dir)
  }
  const made: string[] = []
  for (let i = 0; i < keys; i++) {
    made.push(key('default'))
    if (hooks) made.push(key(QUIET_ACCOUNT))
  }
  otpdCli(binary, ['credits', 'add', '1000000000'], configFile, dir)
  return { keys: made, env: { BENCH_NUMBERS: await checkNumberTemplates(), ...(hooks ? { BENCH_ROTATE: '1' } : {}) } }
}

/** A fresh database in its own directory, seeded, with `binary serve` running on it. */
export async function startSeeded(s: OtpdSettings, binary: string, mode: Mode, label: string, keys = 1): Promise<Seeded> {
  const dir = mkdtempSync(join(s.scratch, `${label}-${mode.toLowerCase()}-`))
  const configFile = benchConfig(dir, mode, s.metricsToken, binary)
  const accounts = await setUpAccounts(binary, configFile, dir, keys)
  const server = await startServer([binary, 'serve', '--listen', '127.0.0.1:0', '--config', configFile], {}, dir, s.serverCpus)
  try {
    const env = await seedKeys(server.url, dir, accounts.keys, s.seed)
    return { dir, server, env: { ...env, ...accounts.env } }
  } catch (e) {
    await server.stop()
    throw e
  }
}

/**
 * Seeds `seed` right and `seed` wrong verifications in all, spread over the
 * keys (a verification answers only to the key that sent it), and writes the
 * id pools: one pair for one key, one pair per key (suffix .<index>) for
 * several, with BENCH_KEYS for the Lua scripts (bench-stats.lua).
 */
export async function seedKeys(url: string, dir: string, keys: string[], seed: number): Promise<Record<string, string>> {
  const per = Math.ceil(seed / keys.length)
  const env: Record<string, string> = { BENCH_KEY: keys[0]! }
  for (const [i, key] of keys.entries()) {
    const ok = await seedVerifications(url, key, per, 1 + 2 * i)
    const wrong = await seedVerifications(url, key, per, 2 + 2 * i)
    Object.assign(env, writeKeyIdPools(dir, i, keys.length, ok, wrong))
  }
  if (keys.length > 1) env.BENCH_KEYS = keys.join(',')
  return env
}

/** Process start to the first 200 (a send to a test recipient), on an existing database with a key. */
export async function coldStart(s: OtpdSettings, binary: string): Promise<number> {
  const dir = mkdtempSync(join(s.scratch, 'cold-'))
  const configFile = benchConfig(dir, 'FULL', s.metricsToken, binary)
  const key = JSON.parse(otpdCli(binary, ['keys', 'create', ...initArgs(binary), '--json'], configFile, dir)).key as string
  const port = await freePort()
  const body = JSON.stringify({ channel: 'sms', recipient: '+15550100001' })
  const t0 = performance.now()
  const proc = Bun.spawn(pinned(s.serverCpus, [binary, 'serve', '--listen', `127.0.0.1:${port}`, '--config', configFile]), {
    cwd: dir,
    env: cleanEnv(),
    stdout: 'ignore',
    stderr: 'ignore',
  })
  try {
    for (;;) {
      if (performance.now() - t0 > 10_000) throw new Error('cold start: no 200 within 10 s')
      try {
        const r = await fetch(`http://127.0.0.1:${port}/api/v1/send`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        })
        if (r.status === 200) return performance.now() - t0
      } catch {
        await Bun.sleep(1)
      }
    }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}
