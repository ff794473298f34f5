/**
 * Secrets at rest and in logs (docs/reliability.md). Runs the compiled server at
 * debug log level with a distinctive server secret and a distinctive provider
 * secret in the environment, sends and verifies with 10-digit codes (custom
 * ones, and generated ones that a local recording webhook receives, so the
 * codes are known without the `log` provider printing them), then scans the
 * database, its -wal and -shm (after a kill -9, so the WAL is full) and the
 * server's whole output for any key, code or secret in clear
 * (scripts/kit/scan.ts). A positive control proves the scan finds what it seeks.
 *
 * Usage: bun scripts/proofs/secrets.ts [--sends=300] [--seed=N]
 * Should the binary lack the `webhook` provider, a `noop` provider is
 * used: then only custom codes are known, and the provider secret is only in
 * the environment.
 */
import { existsSync, readFileSync } from 'node:fs'
import { scan, type Haystack, type Secret } from '../kit/scan.ts'
import { cli, cliJson, makeEnv, numberArg, post, prng, report, seedFromArgs, startServer } from '../kit/otpd.ts'

const SENDS = numberArg('sends', 300)
const SEED = seedFromArgs()
const rand = prng(SEED)
const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('')
const SERVER_SECRET = `srvsecret${hex(40)}`
const PROVIDER_SECRET = `provsecret${hex(40)}`

// A recording webhook: the codes of generated sends arrive here; 1 in 10 answers 500 (delivery failure path).
const received: { verification_id: string; message: string }[] = []
const hook = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: async (req) => {
    const body = (await req.json()) as { verification_id: string; message: string }
    if (rand() < 0.1) return new Response('gateway down', { status: 500 })
    received.push(body)
    return new Response('ok')
  },
})

const limits = `
[limits]
key_requests_per_minute = 1000000000
recipient_per_minute = 1000000000
recipient_per_hour = 1000000000
recipient_per_day = 1000000000
[fraud]
mode = "off"
[logging]
level = "debug"
`
const webhookToml = `[channels]\nsms = ["hook"]\nemail = ["hook"]\nvoice = ["hook"]\n[providers.hook]\ntype = "webhook"\nurl = "http://127.0.0.1:${hook.port}/otp"\nsecret_env = "OTPD_TEST_WEBHOOK_SECRET"\n`
const noopToml = `[channels]\nsms = ["x"]\nemail = ["x"]\nvoice = ["x"]\n[providers.x]\ntype = "noop"\n`
const opts = { vars: { OTPD_TEST_WEBHOOK_SECRET: PROVIDER_SECRET }, database: '' }
let env = makeEnv('secrets', `[server]\nsecret = "${SERVER_SECRET}"\n${limits}${webhookToml}`, opts)
let provider = 'webhook'
if (cli(env, 'config', 'check').code !== 0) {
  env.close()
  env = makeEnv('secrets', `[server]\nsecret = "${SERVER_SECRET}"\n${limits}${noopToml}`, opts)
  provider = 'noop (no webhook provider in this binary)'
}

const secrets: Secret[] = [
  { kind: 'server secret', value: SERVER_SECRET },
  { kind: 'provider secret', value: PROVIDER_SECRET },
]
const cliOutput: string[] = []
const keys: string[] = []
for (let i = 0; i < 5; i++) {
  const r = cli(env, 'keys', 'create', '--init', '--name', `k${i}`, '--json')
  cliOutput.push(r.stdout)
  keys.push(JSON.parse(r.stdout).key)
}
for (const k of keys) secrets.push({ kind: 'api key', value: k })
cliJson(env, 'keys', 'disable', keys[4]!.slice(5, 13))
cliJson(env, 'credits', 'add', '100000')
cliJson(env, 'accounts', 'set', 'default', '--code-length', '10')

const digits = (n: number) => String(1 + Math.floor(rand() * 9)) + Array.from({ length: n - 1 }, () => Math.floor(rand() * 10)).join('')
const codes = new Set<string>()
const counts = { sends: 0, failedDeliveries: 0, generated: 0, custom: 0, verifies: 0 }

async function traffic(url: string, n: number) {
  for (let i = 0; i < n; i++) {
    const key = keys[i % 4]!
    const custom = rand() < 0.4 ? digits(10) : undefined
    const channel = (['sms', 'voice', 'email'] as const)[i % 3]!
    const recipient = channel === 'email' ? `person${i}@example.com` : `+1415${digits(7)}`
    const sent = await post(url, '/api/v1/send', key, { channel, recipient, ...(custom ? { code: custom } : {}) })
    counts.sends++
    if (sent.status === 500) counts.failedDeliveries++
    if (sent.status !== 200) continue
    const id = sent.json.verification_id as string
    let code = custom
    if (custom) counts.custom++
    else {
      const m = received.find((r) => r.verification_id === id)?.message
      code = m ? /[0-9]{10}/.exec(m)?.[0] : undefined
      if (code) counts.generated++
    }
    const wrong = digits(10)
    codes.add(wrong)
    await post(url, '/api/v1/verify', key, { verification_id: id, code: wrong })
    if (code) {
      codes.add(code)
      await post(url, '/api/v1/verify', key, { verification_id: id, code })
    }
    counts.verifies += code ? 2 : 1
    if (i % 10 === 0) {
      await post(url, '/api/v1/verify', keys[4]!, { verification_id: id, code: code ?? wrong }) // disabled key: 403
      await post(url, '/api/v1/send', key.slice(0, -3) + 'abc', { channel, recipient }) // wrong key: 401
    }
  }
}

const violations: string[] = []
const haystacks: Haystack[] = []
const grab = (label: string, output: string) => {
  for (const suffix of ['', '-wal', '-shm']) {
    const f = env.dbPath + suffix
    if (existsSync(f)) haystacks.push({ name: `${label}: otpd.db${suffix}`, bytes: readFileSync(f) })
  }
  haystacks.push({ name: `${label}: server output`, bytes: Buffer.from(output) })
}

// Run 1: traffic, then kill -9 (the WAL keeps every recent page).
let server = await startServer(env)
await traffic(server.url, SENDS)
server.proc.kill('SIGKILL')
await server.proc.exited
grab('after kill -9', server.output())
// Run 2: recovery, a little more traffic, a clean stop.
server = await startServer(env)
await traffic(server.url, Math.ceil(SENDS / 10))
server.proc.kill('SIGTERM')
await server.proc.exited
grab('after SIGTERM', server.output())
hook.stop(true)

for (const c of codes) secrets.push({ kind: 'code', value: c })
const hits = scan(haystacks, secrets)
for (const h of hits) violations.push(`${h.kind} found in ${h.where} (${h.needle})`)
// Positive control: the CLI printed each key once, by design; the scan must find them there.
const control = scan([{ name: 'CLI output', bytes: Buffer.from(cliOutput.join('\n')) }], secrets).filter((h) => h.kind === 'api key').length
if (control !== keys.length) violations.push(`the scan found ${control} of ${keys.length} keys in the CLI output: it cannot be trusted`)
if (codes.size < SENDS) violations.push(`only ${codes.size} codes known: too few to prove anything`)
const bytes = haystacks.reduce((n, h) => n + h.bytes.length, 0)
env.close()

report(
  'secrets',
  {
    seed: SEED,
    provider,
    'API keys looked for': keys.length,
    'codes looked for (10 digits)': `${codes.size} (${counts.custom} custom, ${counts.generated} generated and caught by the webhook, the rest wrong guesses)`,
    'sends / failed deliveries / verifies': `${counts.sends} / ${counts.failedDeliveries} / ${counts.verifies}`,
    'server and provider secrets looked for': 'in clear, hex and base64',
    'files and logs scanned': `${haystacks.length} (${(bytes / 1024).toFixed(0)} KiB): ${haystacks.map((h) => h.name).join('; ')}`,
    'secrets found': hits.length,
    'positive control (keys found in the CLI output)': `${control} of ${keys.length}`,
  },
  violations,
)
