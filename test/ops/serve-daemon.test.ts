/**
 * `otpd serve` as a daemon (docs/operating.md): SIGHUP reloads under traffic (a bad
 * config is refused and the old one stays), journald priority prefixes, a
 * closed stdout, and a `stopped` line.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { openSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliEnv, post, startServer, type CliEnv } from '../kit/cli.ts'
import { waitFor } from '../kit/wait-for.ts'

setDefaultTimeout(30_000)

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

function writeConfig(env: CliEnv, toml: string): void {
  writeFileSync(env.configFile, env.configText(toml))
}

const LIMITS = (perMinute: number) =>
  `[limits]\nkey_requests_per_minute = 100000\nrecipient_per_minute = ${perMinute}\nrecipient_per_hour = 1000\nrecipient_per_day = 1000\n`

test('SIGHUP under traffic: a bad config is refused in one line and the old limits stay; a good one is in force at once; no request fails', async () => {
  const env = await cliEnv(LIMITS(100))
  const load = env.json('keys', 'create', '--name', 'load').key
  const probe = env.json('keys', 'create', '--name', 'probe').key
  env.run('credits', 'add', '20')
  const server = await startServer(env)
  // Warnings and errors are on stderr (the helper reads stdout).
  let stderr = ''
  void (async () => {
    for await (const chunk of server.proc.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  const output = () => server.output() + stderr

  const statuses: number[] = []
  let running = true
  const traffic = (async () => {
    while (running) {
      try {
        statuses.push((await post(server.url, '/api/v1/send', load, { channel: 'sms', recipient: '+15550100001' })).status)
      } catch {
        statuses.push(-1) // a dropped connection
      }
    }
  })()
  const sendTo = async (recipient: string) => (await post(server.url, '/api/v1/send', probe, { channel: 'sms', recipient })).status
  // Requests in flight across both reloads: some answered before the first, more after the second
  // (counted, not timed, so a slow machine waits longer instead of failing).
  await waitFor(() => statuses.length >= 3, { what: 'traffic before the reloads' })

  writeConfig(env, LIMITS(2).replace('recipient_per_minute = 2', 'recipient_per_minute = "2"') + '[channels]\nsms = ["nowhere"]\n')
  server.proc.kill('SIGHUP')
  await waitFor(() => output().includes('reload refused'), { what: 'the refusal' })
  const refusal = output()
    .split('\n')
    .filter((l) => l.includes('reload refused'))
  expect(refusal).toHaveLength(1)
  expect(JSON.parse(refusal[0]!)).toMatchObject({ level: 'error' })
  expect(refusal[0]).toContain('limits.recipient_per_minute must be a whole number')
  expect(refusal[0]).toContain("channels.sms names provider 'nowhere', which is not defined")
  expect([await sendTo('+14155550101'), await sendTo('+14155550101'), await sendTo('+14155550101')]).toEqual([200, 200, 200])

  // A setting that needs a restart is named, and the rest applies.
  writeFileSync(env.configFile, env.configText(`busy_timeout_ms = 4000\n${LIMITS(2)}`))
  server.proc.kill('SIGHUP')
  await waitFor(() => server.output().includes('configuration reloaded'), { what: 'the reload' })
  const atReload = statuses.length
  expect([await sendTo('+14155550102'), await sendTo('+14155550102'), await sendTo('+14155550102')]).toEqual([200, 200, 429])
  await waitFor(() => output().includes('database.busy_timeout_ms changed'), { what: 'the restart warning' })
  expect(stderr).toContain('database.busy_timeout_ms changed in the config; the running values stay until otpd restarts')

  await waitFor(() => statuses.length >= atReload + 3, { what: 'traffic after the reloads' })
  running = false
  await traffic
  expect(statuses.filter((s) => s !== 200)).toEqual([])
  expect(await server.stop()).toBe(0)
  expect(server.output()).toContain('"msg":"stopped"')
})

describe('journald', () => {
  async function runWithJournal(journalIs: 'stdout' | 'stderr'): Promise<{ out: string; err: string }> {
    const env = await cliEnv()
    const outFile = join(env.dir, 'out.log')
    const errFile = join(env.dir, 'err.log')
    const outFd = openSync(outFile, 'w')
    const errFd = openSync(errFile, 'w')
    const st = statSync(journalIs === 'stdout' ? outFile : errFile)
    const proc = Bun.spawn(['bun', MAIN, 'serve', '--listen', '127.0.0.1:0'], {
      env: { ...process.env, OTPD_CONFIG: env.configFile, JOURNAL_STREAM: `${st.dev}:${st.ino}` },
      cwd: env.dir,
      stdin: 'ignore',
      stdout: outFd,
      stderr: errFd,
    })
    await waitFor(() => readFileSync(outFile, 'utf8').includes('otpd listening'), { what: 'listening' })
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
    return { out: readFileSync(outFile, 'utf8'), err: readFileSync(errFile, 'utf8') }
  }

  test('when JOURNAL_STREAM names stderr, warnings there carry <4>; stdout lines stay plain', async () => {
    const { out, err } = await runWithJournal('stderr')
    expect(err).toContain('no delivery provider is configured')
    for (const line of err.trim().split('\n')) expect(line).toStartWith('<4>{')
    expect(out).not.toContain('no delivery provider is configured')
    for (const line of out.trim().split('\n')) expect(line).toStartWith('{')
  })

  test('when JOURNAL_STREAM names stdout, info lines there carry <6>', async () => {
    const { out, err } = await runWithJournal('stdout')
    for (const line of out.trim().split('\n')) expect(line).toStartWith('<6>{')
    for (const line of err.trim().split('\n')) expect(line).toStartWith('{')
  })
})

test('a closed stdout never stops the server (otpd serve | head -c 10)', async () => {
  const env = await cliEnv()
  const key = env.json('keys', 'create').key
  const proc = Bun.spawn(['bun', MAIN, 'serve', '--listen', '127.0.0.1:0'], {
    env: { ...process.env, OTPD_CONFIG: env.configFile },
    cwd: env.dir,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  try {
    const reader = proc.stdout.getReader()
    let out = ''
    let url = ''
    while (!url) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`server exited:\n${out}`)
      out += new TextDecoder().decode(value)
      url = /otpd listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(out)?.[1] ?? ''
    }
    await reader.cancel() // the reading end goes away, as with `| head -c 10`
    for (let round = 0; round < 3; round++) {
      // Each request writes a log line to the closed stdout, after the logger's flush delay.
      expect((await post(url, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })).status).toBe(200)
      await Bun.sleep(100)
    }
    expect(proc.exitCode).toBeNull()
    expect((await fetch(url + '/healthz')).status).toBe(200)
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
})

test('the log says outcome=test for a test recipient, as the metrics do', async () => {
  const env = await cliEnv()
  const key = env.json('keys', 'create').key
  const server = await startServer(env)
  expect((await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })).status).toBe(200)
  await waitFor(() => server.output().includes('"msg":"request"'), { what: 'the request line' })
  const line = server
    .output()
    .split('\n')
    .find((l) => l.includes('"msg":"request"'))!
  expect(JSON.parse(line).outcome).toBe('test')
})
