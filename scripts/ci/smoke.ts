/**
 * Smoke test of the compiled binary, as a new user would run it: from an empty
 * temporary directory, `otpd serve`, `otpd keys create`, a send to a test
 * recipient, its verify, SIGTERM, then `otpd config init`. Usage: bun scripts/ci/smoke.ts [dist/otpd]
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const binary = resolve(process.argv[2] ?? 'dist/otpd')
const dir = mkdtempSync(join(tmpdir(), 'otpd-smoke-'))
const otpd = join(dir, 'otpd')
copyFileSync(binary, otpd)
// Nothing beside the binary; no config, no inherited OTPD_* settings.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTPD_')))

function fail(msg: string): never {
  console.error(`smoke: FAIL: ${msg}`)
  process.exit(1)
}

const server = Bun.spawn([otpd, 'serve', '--listen', '127.0.0.1:0'], { cwd: dir, env, stdout: 'pipe', stderr: 'inherit' })
try {
  const reader = server.stdout.getReader()
  let out = ''
  let url = ''
  const deadline = Date.now() + 15_000
  while (!url) {
    if (Date.now() > deadline) fail(`server did not start:\n${out}`)
    const { value, done } = await reader.read()
    if (done) fail(`server exited:\n${out}`)
    out += new TextDecoder().decode(value)
    url = /listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(out)?.[1] ?? ''
  }
  const created = Bun.spawnSync([otpd, 'keys', 'create', '--name', 'smoke', '--json'], { cwd: dir, env })
  if (created.exitCode !== 0) fail(`keys create: ${created.stderr}`)
  const key = JSON.parse(created.stdout.toString()).key as string
  const call = async (path: string, body: unknown) => {
    const r = await fetch(url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: r.status, json: (await r.json()) as Record<string, unknown> }
  }
  const sent = await call('/api/v1/send', { channel: 'sms', recipient: '+15550100001' })
  if (sent.status !== 200) fail(`send answered ${sent.status} ${JSON.stringify(sent.json)}`)
  const verified = await call('/api/v1/verify', { verification_id: sent.json.verification_id, code: '123456' })
  if (verified.status !== 200 || verified.json.verified !== true) fail(`verify answered ${verified.status} ${JSON.stringify(verified.json)}`)
  server.kill('SIGTERM')
  const code = await server.exited
  if (code !== 0) fail(`server exited with ${code} on SIGTERM`)
  // The example config is embedded in the binary: config init needs no file beside it.
  const init = Bun.spawnSync([otpd, 'config', 'init', '--file', join(dir, 'otp.config.toml')], { cwd: dir, env })
  if (init.exitCode !== 0) fail(`config init: ${init.stderr}`)
  if (readFileSync(join(dir, 'otp.config.toml'), 'utf8') !== readFileSync(resolve('otp.config.example.toml'), 'utf8'))
    fail('config init did not write the example config')
  console.log(`smoke: ok (${binary}: serve, keys create, send, verify, stop, config init)`)
} finally {
  server.kill()
  rmSync(dir, { recursive: true, force: true })
}
