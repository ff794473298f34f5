/**
 * Which database a command uses (docs/configuration.md#paths): a relative
 * database.path is read from the config file's directory, a command that
 * creates a database says so on stderr with its absolute path, and
 * `config check` and the start line show absolute paths. A command that
 * changes data creates a database only with --init.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cliEnv, type CliRun } from '../kit/cli.ts'
import { ON_PG, testSqliteOnly } from '../kit/harness.ts'

setDefaultTimeout(30_000)

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

function runIn(cwd: string, args: string[]): CliRun {
  const p = Bun.spawnSync(['bun', MAIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/' } })
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
}

/** A config in <dir>/etc naming `data/otpd.db` (relative), and another directory to run commands from. */
async function layout(): Promise<{ etc: string; config: string; elsewhere: string; database: string }> {
  const env = await cliEnv('', {}, { noDatabase: true })
  const etc = join(env.dir, 'etc')
  const elsewhere = join(env.dir, 'elsewhere')
  mkdirSync(etc)
  mkdirSync(elsewhere)
  const config = join(etc, 'otp.config.toml')
  writeFileSync(config, '[database]\npath = "data/otpd.db"\n')
  return { etc, config, elsewhere, database: join(etc, 'data', 'otpd.db') }
}

testSqliteOnly('a command that changes data refuses where no database exists, naming the config it read, and creates nothing', async () => {
  const l = await layout()
  for (const args of [
    ['keys', 'create', '--name', 'backend'],
    ['credits', 'add', '10'],
    ['accounts', 'create', 'acme'],
    ['operators', 'add', 'alice'],
    ['webhooks', 'add', '--url', 'https://example.com/hook'],
  ]) {
    const r = runIn(l.elsewhere, [...args, '--config', '../etc/otp.config.toml'])
    expect([args.join(' '), r.code, r.stdout, r.stderr]).toEqual([
      args.join(' '),
      1,
      '',
      `otpd: error: no database at ${l.database} (database.path from ${l.config}): this command changes data and does not create one; ` +
        'pass --config for the database otpd serve uses, or add --init to create it here\n',
    ])
  }
  expect(existsSync(join(l.etc, 'data'))).toBe(false)
  expect(existsSync(join(l.elsewhere, 'data'))).toBe(false)
  expect(runIn(l.elsewhere, ['keys', 'create', '--help']).stdout).toContain('--init')
})

testSqliteOnly('with --init, a command run from another directory creates the database beside the config file, and says so', async () => {
  const l = await layout()
  const first = runIn(l.elsewhere, ['accounts', 'create', 'acme', '--init', '--config', '../etc/otp.config.toml'])
  expect(first.code).toBe(0)
  expect(first.stderr).toBe(`otpd: created a new, empty database at ${l.database} (database.path from ${l.config})\n`)
  expect(existsSync(l.database)).toBe(true)
  expect(existsSync(join(l.elsewhere, 'data'))).toBe(false)
  // The second command finds it, and says nothing.
  const second = runIn(l.elsewhere, ['accounts', 'list', '--config', l.config])
  expect([second.code, second.stderr]).toEqual([0, ''])
  expect(second.stdout).toContain('acme')
})

testSqliteOnly('with no config file, the database made in the current directory is named by its absolute path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-nocfg-'))
  try {
    const r = runIn(dir, ['accounts', 'create', 'acme', '--init'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe(`otpd: created a new, empty database at ${join(dir, 'data', 'otpd.db')} (database.path from built-in defaults)\n`)
  } finally {
    Bun.spawnSync(['rm', '-rf', dir])
  }
})

testSqliteOnly('config check shows the absolute database path and config file, in text and JSON', async () => {
  const l = await layout()
  const text = runIn(l.elsewhere, ['config', 'check', '--config', '../etc/otp.config.toml'])
  expect(text.code).toBe(0)
  expect(text.stdout).toStartWith(`configuration OK (${l.config})\n`)
  expect(text.stdout).toContain(`  database  ${l.database}\n`)
  const json = JSON.parse(runIn(l.elsewhere, ['config', 'check', '--json', '--config', '../etc/otp.config.toml']).stdout)
  expect(json).toMatchObject({ source: l.config, database: l.database })
})

testSqliteOnly('serve names the config file and database by absolute paths at start, and warns when it creates the database', async () => {
  const l = await layout()
  const p = Bun.spawn(['bun', MAIN, 'serve', '--listen', '127.0.0.1:0', '--config', '../etc/otp.config.toml'], {
    cwd: l.elsewhere,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const reader = p.stdout.getReader()
  while (!out.includes('otpd listening')) {
    const { value, done } = await reader.read()
    if (done) break
    out += new TextDecoder().decode(value)
  }
  p.kill('SIGTERM')
  await p.exited
  const start = JSON.parse(out.split('\n').find((line) => line.includes('otpd listening'))!)
  expect(start).toMatchObject({ config: l.config, database: l.database })
  const warning = JSON.parse((await new Response(p.stderr).text()).split('\n').find((line) => line.includes('new, empty database'))!)
  expect(warning).toMatchObject({ level: 'warn', database: l.database })
})

testSqliteOnly('otpd --help states the rule', async () => {
  const r = runIn((await layout()).elsewhere, ['--help'])
  expect(r.stdout).toContain('Relative paths in a config file are read from its directory.')
})

test.skipIf(!ON_PG)('on PostgreSQL, a database with no otpd tables is refused the same way, unless --init migrates it', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const write = env.run('keys', 'create', '--name', 'backend')
  expect([write.code, write.stdout]).toEqual([1, ''])
  expect(write.stderr).toStartWith('otpd: error: no database at ')
  expect(write.stderr).toContain(': it has no otpd tables (database.url from ')
  expect(write.stderr).toEndWith(
    'this command changes data and does not create one; pass --config for the database otpd serve uses, or add --init to create it here\n',
  )
  expect(env.run('keys', 'list').stderr).toContain('it has no otpd tables (database.url from ')
  expect(env.json('keys', 'create', '--name', 'backend', '--init').name).toBe('backend')
  expect(env.json('keys', 'list')).toHaveLength(1)
})
