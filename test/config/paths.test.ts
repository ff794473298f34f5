/**
 * Paths in the config (docs/configuration.md#paths): a relative path written
 * in a config file is read from that file's directory, so a command run from
 * any directory finds the server's database; the environment and the built-in
 * defaults without a file keep the current directory.
 */
import { expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { loadConfig } from '../../src/app/load-config.ts'
import { configProblems } from '../kit/config.ts'
import { tempDir } from '../kit/cleanup.ts'

function configDir(text: string): { dir: string; file: string } {
  const dir = tempDir('otpd-paths-')
  mkdirSync(join(dir, 'etc'))
  const file = join(dir, 'etc', 'otp.config.toml')
  writeFileSync(file, text)
  return { dir, file }
}

test('relative paths written in the file are read from its directory, not the current one', () => {
  const { dir, file } = configDir('[database]\npath = "data/otpd.db"\n[server]\nsecret_file = "../secret/otpd.secret"\n')
  const { config } = loadConfig({ file, env: {} })
  expect(config.database.path).toBe(join(dir, 'etc', 'data', 'otpd.db'))
  expect(config.server.secret_file).toBe(join(dir, 'secret', 'otpd.secret'))
  // The certificate files are read by the check: where it looked is what its problems name.
  const tls = configDir('[server.tls]\ncert = "tls/cert.pem"\nkey = "./tls/key.pem"\n')
  expect(configProblems(() => loadConfig({ file: tls.file, env: {} }))).toEqual([
    `server.tls.cert cannot be read: ${join(tls.dir, 'etc', 'tls', 'cert.pem')} (ENOENT)`,
    `server.tls.key cannot be read: ${join(tls.dir, 'etc', 'tls', 'key.pem')} (ENOENT)`,
  ])
})

test('a file given by a relative --config or OTPD_CONFIG is named, and read from, by its absolute path', () => {
  const { dir, file } = configDir('[database]\npath = "otpd.db"\n')
  const rel = relative(process.cwd(), file)
  for (const loaded of [loadConfig({ file: rel, env: {} }), loadConfig({ env: { OTPD_CONFIG: rel } })]) {
    expect(loaded.file).toBe(file)
    expect(loaded.source).toBe(file)
    expect(loaded.config.database.path).toBe(join(dir, 'etc', 'otpd.db'))
  }
})

test("a file that sets no database.path gets the default in the file's directory", () => {
  const { dir, file } = configDir('[server]\nlisten = "127.0.0.1:9001"\n')
  expect(loadConfig({ file, env: {} }).config.database.path).toBe(join(dir, 'etc', 'data', 'otpd.db'))
})

test('absolute paths, :memory:, environment values and the defaults without a file are kept as given', () => {
  const { file } = configDir('[database]\npath = "/srv/otpd/otpd.db"\n')
  expect(loadConfig({ file, env: {} }).config.database.path).toBe('/srv/otpd/otpd.db')
  expect(loadConfig({ file: configDir('[database]\npath = ":memory:"\n').file, env: {} }).config.database.path).toBe(':memory:')
  // The environment has no file: its relative path is the current directory's, as a shell's would be.
  expect(loadConfig({ file, env: { OTPD_DATABASE__PATH: 'here/otpd.db' } }).config.database.path).toBe('here/otpd.db')
  expect(loadConfig({ env: {} }).config.database.path).toBe('./data/otpd.db')
})
