/**
 * An upgrade as docs/install.md#upgrades describes it: the previous release's
 * binary (scripts/packaging/previous-release.ts: the newest v* tag, built once
 * and cached) makes a database, with a key, credits, a debit and a code still
 * pending; this code then starts on it, applies its migrations, and the key,
 * the balance and the pending code answer as before, the database's tables
 * being this code's schema. On the engine of the run (OTPD_TEST_DATABASE).
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { previousBinary, previousRelease } from '../../scripts/packaging/previous-release.ts'
import * as pgSchema from '../../src/store/pg/schema.ts'
import * as sqliteSchema from '../../src/store/sqlite/schema.ts'
import { afterTest, tempDir } from '../kit/cleanup.ts'
import { ON_PG, PG_TEST_SECRET } from '../kit/harness.ts'
import { freshDatabase } from '../kit/pg-cluster.ts'
import { drizzleShape, pgCatalogShape, shapeDifferences, sqliteCatalogShape } from '../kit/schema-shape.ts'

// Each step starts a server process.
setDefaultTimeout(60_000)

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
const previous = previousRelease()
if ('skip' in previous) console.warn(`upgrade test skipped: ${previous.skip}`)

/** `otpd serve` of `command` on a free port: its URL, and a stop that expects a clean exit. */
async function serve(command: string[], env: Record<string, string>, cwd: string): Promise<{ url: string; stop(): Promise<number> }> {
  const proc = Bun.spawn([...command, 'serve', '--listen', '127.0.0.1:0'], { env, cwd, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  afterTest(() => proc.kill('SIGKILL'))
  let out = ''
  const decoder = new TextDecoder()
  for await (const chunk of proc.stdout) {
    out += decoder.decode(chunk, { stream: true })
    const url = /listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(out)?.[1]
    if (url) {
      return {
        url,
        stop: () => {
          proc.kill('SIGTERM')
          return proc.exited
        },
      }
    }
  }
  throw new Error(`serve exited: ${out}${await new Response(proc.stderr).text()}`)
}

async function post(url: string, key: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: r.status, json: (await r.json()) as Record<string, unknown> }
}

describe.skipIf('skip' in previous)(`an upgrade from the previous release (${'name' in previous ? previous.name : 'none'})`, () => {
  let binary = ''
  // The first run builds the previous release (cached after): allow it a few minutes.
  beforeAll(() => {
    if ('commit' in previous) binary = previousBinary(previous.commit)
  }, 300_000)

  test('this code starts on its database, migrates it, and its key, balance and pending code answer as before', async () => {
    const dir = tempDir('otpd-upgrade-')
    const url = ON_PG ? await freshDatabase('otpd_upgrade') : undefined
    const configFile = join(dir, 'otp.config.toml')
    const database = `[database]\npath = "${join(dir, 'otpd.db')}"\n${url ? `url = "${url}"\n` : ''}`
    writeFileSync(configFile, `${database}${url ? `[server]\nsecret = "${PG_TEST_SECRET}"\n` : ''}`)
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTPD_'))), OTPD_CONFIG: configFile } as Record<
      string,
      string
    >
    const cli = (command: string[], ...args: string[]) => {
      const p = Bun.spawnSync([...command, ...args], { env, cwd: dir })
      expect(`${args.join(' ')}: exit ${p.exitCode} ${p.exitCode === 0 ? '' : p.stderr}`).toBe(`${args.join(' ')}: exit 0 `)
      return p.stdout.toString()
    }
    const before = [binary]
    const after = ['bun', MAIN]

    // The previous release: a key, 7 credits, a real send (1 credit) and a test send left pending.
    const key = JSON.parse(cli(before, 'keys', 'create', '--name', 'upgrade', '--json')).key as string
    cli(before, 'credits', 'add', '7')
    const old = await serve(before, env, dir)
    expect((await post(old.url, key, '/api/v1/send', { channel: 'sms', recipient: '+14155550123' })).status).toBe(200)
    const pending = await post(old.url, key, '/api/v1/send', { channel: 'sms', recipient: '+15550100001' })
    expect(pending.status).toBe(200)
    expect(await old.stop()).toBe(0)

    // This code on the same database: serve migrates it at start.
    const now = await serve(after, env, dir)
    const id = pending.json.verification_id as string
    const verified = await post(now.url, key, '/api/v1/verify', { verification_id: id, code: '123456' })
    expect(verified.json).toMatchObject({ success: true, verified: true })
    const status = await fetch(`${now.url}/api/v1/verifications/${id}`, { headers: { authorization: `Bearer ${key}` } })
    expect(((await status.json()) as Record<string, unknown>).status).toBe('approved')
    expect(await now.stop()).toBe(0)
    expect(JSON.parse(cli(after, 'credits', 'balance', '--json'))).toEqual({ account: 'default', balance: 6 })

    // Its tables are this code's schema, as if it had been made by it.
    if (url) {
      const sql = new SQL({ url, max: 1 })
      afterTest(() => sql.close())
      expect(shapeDifferences(drizzleShape(pgSchema, 'pg'), await pgCatalogShape(sql), ['the schema', 'the upgraded database'])).toEqual([])
    } else {
      const db = new Database(join(dir, 'otpd.db'), { readonly: true })
      afterTest(() => db.close())
      expect(shapeDifferences(drizzleShape(sqliteSchema, 'sqlite'), sqliteCatalogShape(db), ['the schema', 'the upgraded database'])).toEqual([])
    }
  })
})
