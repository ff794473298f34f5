/**
 * Config warnings come before any start error (docs/troubleshooting.md): a
 * mistyped OTPD_ variable often explains the failure that follows, so it is
 * printed first, whether the start then fails on the port or on the config.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv } from '../kit/cli.ts'

setDefaultTimeout(30_000)

const TYPO = 'environment variable OTPD_SERVER_LISTN matches no setting and is ignored (did you mean OTPD_SERVER__LISTEN?)'

/** Indexes of the first line holding each text, in stderr. */
function order(stderr: string, ...texts: string[]): number[] {
  const lines = stderr.split('\n')
  return texts.map((t) => lines.findIndex((l) => l.includes(t)))
}

test('a port in use: the OTPD_ typo warning is printed, before the error', async () => {
  const held = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  try {
    const env = await cliEnv(`[server]\nlisten = "127.0.0.1:${held.port}"\n`, { OTPD_SERVER_LISTN: `127.0.0.1:0` })
    const r = await env.runAsync('serve')
    expect(r.code).toBe(1)
    const [warning, error] = order(r.stderr, TYPO, 'otpd: error: cannot listen on')
    expect(warning).toBeGreaterThanOrEqual(0)
    expect(error).toBeGreaterThan(warning!)
  } finally {
    held.stop(true)
  }
})

test.each([['serve'], ['keys', 'list']] as string[][])('a config error on %s: the warning first, then the error', async (...args: string[]) => {
  const env = await cliEnv('[logging]\nlevel = "loud"\n', { OTPD_SERVER_LISTN: '127.0.0.1:0' })
  const r = env.run(...args)
  expect(r.code).toBe(1)
  expect(r.stderr).toStartWith(`otpd: warning: ${TYPO}\notpd: error: invalid configuration (`)
})

test('config check prints the warnings of a config it refuses, before the problems (and in --json)', async () => {
  const env = await cliEnv('[logging]\nlevel = "loud"\n', { OTPD_SERVER_LISTN: '127.0.0.1:0' })
  const r = env.run('config', 'check')
  expect(r.code).toBe(1)
  expect(r.stderr).toStartWith(`warning: ${TYPO}\n${env.configFile}: 1 problem\n`)
  const json = JSON.parse(env.run('config', 'check', '--json').stdout)
  expect(json).toMatchObject({ ok: false, warnings: [TYPO] })
})
