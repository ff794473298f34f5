/**
 * Permission errors name the absolute path and what otpd needs
 * (docs/troubleshooting.md#permission-denied), as the read-only-database
 * message does. The commands run as another user (nobody) when the tests run
 * as root, since root reads and writes anything.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testSqliteOnly } from '../kit/harness.ts'
import { tempDir } from '../kit/cleanup.ts'

setDefaultTimeout(30_000)

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
const AS_ROOT = process.getuid?.() === 0
const OTHER = AS_ROOT ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []
const USER = AS_ROOT ? 'uid 65534' : Bun.spawnSync(['id', '-un']).stdout.toString().trim() || `uid ${process.getuid?.()}`
const NEEDS = '(the installed service runs as otpd: sudo -u otpd otpd …)'

/** A directory the other user can enter and read, and write where a test opens it up. */
function dir(): string {
  const d = tempDir('otpd-perm-')
  chmodSync(d, 0o755)
  return d
}

function run(cwd: string, args: string[]): { code: number; stderr: string } {
  const p = Bun.spawnSync([...OTHER, 'bun', MAIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: tmpdir() } })
  return { code: p.exitCode ?? -1, stderr: p.stderr.toString() }
}

test('an unreadable config file: its absolute path and that otpd must read it', () => {
  const d = dir()
  writeFileSync(join(d, 'otp.config.toml'), '[server]\nlisten = "127.0.0.1:8080"\n', { mode: 0o600 })
  chmodSync(join(d, 'otp.config.toml'), AS_ROOT ? 0o600 : 0o000)
  const r = run(d, ['keys', 'list', '--config', 'otp.config.toml'])
  expect(r.code).toBe(1)
  const file = join(d, 'otp.config.toml')
  expect(r.stderr).toBe(
    `otpd: error: invalid configuration (${file}): cannot read the config file ${file} (permission denied): otpd, running as ${USER}, needs to read it ${NEEDS}\n`,
  )
})

testSqliteOnly('a database directory otpd cannot create: the level that failed, and the directory it needs to write', () => {
  const d = dir()
  const parent = join(d, 'state')
  mkdirSync(parent, { mode: 0o755 })
  if (!AS_ROOT) chmodSync(parent, 0o555)
  writeFileSync(join(d, 'otp.config.toml'), '[database]\npath = "state/data/otpd.db"\n')
  const r = run(d, ['keys', 'create', '--init'])
  chmodSync(parent, 0o755)
  expect(r.code).toBe(1)
  expect(r.stderr).toBe(
    `otpd: error: cannot create the database directory ${join(parent, 'data')} (permission denied): otpd, running as ${USER}, needs write access to ${parent} to create it, or ${join(parent, 'data')} made for it ${NEEDS}\n`,
  )
})

testSqliteOnly('a database behind a directory otpd cannot enter is not called missing', () => {
  const d = dir()
  const locked = join(d, 'locked')
  mkdirSync(join(locked, 'data'), { recursive: true, mode: 0o700 })
  if (!AS_ROOT) chmodSync(locked, 0o000)
  writeFileSync(join(d, 'otp.config.toml'), '[database]\npath = "locked/data/otpd.db"\n')
  const r = run(d, ['keys', 'list'])
  chmodSync(locked, 0o700)
  expect(r.code).toBe(1)
  expect(r.stderr).toBe(
    `otpd: error: cannot reach the database ${join(locked, 'data', 'otpd.db')} (permission denied): otpd, running as ${USER}, needs to enter every directory above it, and to read and write it ${NEEDS}\n`,
  )
})

testSqliteOnly('a server secret made by another user (a command run as root): its path, and that otpd must read it', () => {
  const d = dir()
  const data = join(d, 'data')
  mkdirSync(data, { mode: 0o777 })
  chmodSync(data, 0o777)
  writeFileSync(join(d, 'otp.config.toml'), '[database]\npath = "data/otpd.db"\n')
  // The database made by this user, then opened up; the secret beside it stays 0600 (unreadable to the other user).
  expect(Bun.spawnSync(['bun', MAIN, 'accounts', 'create', 'acme', '--init'], { cwd: d }).exitCode).toBe(0)
  for (const f of ['otpd.db', 'otpd.db-wal', 'otpd.db-shm']) chmodSync(join(data, f), 0o666)
  if (!AS_ROOT) chmodSync(join(data, 'otpd.secret'), 0o000)
  const r = run(d, ['keys', 'list'])
  expect(r.code).toBe(1)
  expect(r.stderr).toBe(
    `otpd: error: cannot read the server secret ${join(data, 'otpd.secret')} (permission denied): otpd, running as ${USER}, needs to read and write it, like the database beside it ${NEEDS}\n`,
  )
})
