/**
 * docs/configuration.md, the config schema (src/config/schema.ts) and
 * otp.config.example.toml cannot drift apart: every key of the schema has its
 * row in the reference with its exact type and default, every key the
 * reference documents exists, every key of the example (commented ones
 * included) exists and every schema key is in the example, and each provider
 * type's keys are exactly those its reader takes. `[hooks.NAME]` tables are
 * read the same way: their shared keys from the schema's HookConfig, a
 * type's own from its adapter (src/hooks/registry.ts).
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { OptionalKind, type TSchema } from '@sinclair/typebox'
import { resolveConfig } from '../../src/config/load.ts'
import { Config, HookConfig, RouteConfig } from '../../src/config/schema.ts'
import { HOOK_ADAPTERS } from '../../src/hooks/registry.ts'
import { checkProviders, PROVIDER_TYPES } from '../../src/delivery/registry.ts'

const ROOT = join(import.meta.dir, '..', '..')
const DOC = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8')
const EXAMPLE = readFileSync(join(ROOT, 'otp.config.example.toml'), 'utf8')

/** Provider tables are checked per type by the delivery registry, not by the schema. */
const PROVIDERS = 'providers'
const PROVIDER_KEY = 'providers.NAME.'

/** Hook tables: their shared keys come from HookConfig (`hooks.NAME.type`...). */
const HOOKS = 'hooks'
const HOOK_KEY = 'hooks.NAME.'

/** `[[routing]]` tables: their keys come from RouteConfig (`routing.countries`...). */
const ROUTING = 'routing'

/** Every leaf of the schema by its dotted key: `server.listen`, `server.tls.cert`... */
function schemaKeys(schema: TSchema = Config, path: string[] = []): Map<string, TSchema> {
  const out = new Map<string, TSchema>()
  if (path.length === 0 && schema === Config) for (const [k, v] of schemaKeys(HookConfig, [HOOKS, 'NAME'])) out.set(k, v)
  if (path.length === 0 && schema === Config) for (const [k, v] of schemaKeys(RouteConfig, [ROUTING])) out.set(k, v)
  for (const [name, s] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
    const key = [...path, name]
    if (key.join('.') === PROVIDERS || (path.length === 0 && (name === HOOKS || name === ROUTING))) continue
    if (s.type === 'object' && s.properties) for (const [k, v] of schemaKeys(s, key)) out.set(k, v)
    else out.set(key.join('.'), s)
  }
  return out
}
const SCHEMA = schemaKeys()

/** The type column as the reference must write it. */
function typeText(s: TSchema): string {
  if (Array.isArray(s.anyOf)) return `one of ${s.anyOf.map((v: TSchema) => `\`${JSON.stringify(v.const)}\``).join(', ')}`
  if (s.type === 'integer' || s.type === 'number') return `${s.type}, ${s.minimum}-${s.maximum}`
  if (s.type === 'array' && (s.items as TSchema).type === 'string') return 'list of strings'
  if (s.type === 'string') return 'string'
  if (s.type === 'boolean') return 'boolean'
  if (s.type === 'object' && s.patternProperties) return 'table of strings'
  throw new Error(`no type text for ${JSON.stringify(s)}`)
}

/** The default column: the TOML value in a code span, or (unset). */
function defaultText(s: TSchema): string {
  const toml = (v: unknown): string => (Array.isArray(v) ? `[${v.map(toml).join(', ')}]` : typeof v === 'string' ? JSON.stringify(v) : String(v))
  return s.default === undefined ? '(unset)' : `\`${toml(s.default)}\``
}

interface Row {
  key: string
  type: string
  default: string
  /** For `providers.NAME.*` rows, the provider type whose section holds them. */
  providerType?: string
}

/** The key rows of the reference's tables: `| \`key\` | type | default | meaning |`. */
function documentedRows(markdown: string): Row[] {
  const rows: Row[] = []
  let providerType: string | undefined
  for (const line of markdown.split('\n')) {
    const heading = /^#+ (.*)$/.exec(line)
    if (heading) providerType = /^Provider type `(\w+)`$/.exec(heading[1]!)?.[1]
    const cells = /^\| `([a-z_.A-Z0-9]+)` \|(.*)\|$/.exec(line)
    if (!cells) continue
    const [type, def] = cells[2]!.split(' | ').map((c) => c.trim())
    rows.push({ key: cells[1]!, type: type!, default: def!, providerType: cells[1]!.startsWith(PROVIDER_KEY) ? providerType : undefined })
  }
  return rows
}
const ROWS = documentedRows(DOC)

/** The keys a provider type reads from its table: its table is a proxy that records every key asked for. */
function providerKeys(type: string): string[] {
  const asked = new Set<string>()
  const table = new Proxy({ type } as Record<string, unknown>, {
    get(target, key) {
      if (typeof key === 'string') asked.add(key)
      return Reflect.get(target, key)
    },
  })
  checkProviders({ ...resolveConfig({}), providers: { p: table } }, {})
  return [...asked].sort()
}

/** Keys of the example file, commented ones included (`# secret = "..."`), by section; provider tables by their type. */
function exampleKeys(toml: string): { key: string; providerType?: string; hookType?: string }[] {
  const out: { key: string; providerType?: string; provider?: string; hook?: string }[] = []
  const types = new Map<string, string>()
  const hookTypes = new Map<string, string>()
  let section = ''
  for (const line of toml.split('\n')) {
    // `[[routing]]`, an array of tables, names its keys as a table does.
    const table = /^#?\s*\[\[?([a-z_.]+)\]\]?\s*$/.exec(line)
    if (table) {
      section = table[1]!
      continue
    }
    const assignment = /^#?\s*([a-z_]+)\s*=\s*(.*)$/.exec(line)
    if (!assignment || section === '') continue
    if (section.startsWith(`${HOOKS}.`)) {
      const name = section.slice(HOOKS.length + 1)
      if (assignment[1] === 'type') hookTypes.set(name, JSON.parse(assignment[2]!.split('#')[0]!.trim()))
      out.push({ key: `${HOOK_KEY}${assignment[1]}`, hook: name })
    } else if (section.startsWith(`${PROVIDERS}.`)) {
      const name = section.slice(PROVIDERS.length + 1)
      if (assignment[1] === 'type') types.set(name, JSON.parse(assignment[2]!.split('#')[0]!.trim()))
      out.push({ key: `${PROVIDER_KEY}${assignment[1]}`, provider: name })
    } else out.push({ key: `${section}.${assignment[1]}` })
  }
  return out.map(({ key, provider, hook }) => ({
    key,
    providerType: provider === undefined ? undefined : types.get(provider),
    hookType: hook === undefined ? undefined : hookTypes.get(hook),
  }))
}

describe('docs/configuration.md', () => {
  test('documents every key of the schema once, with its exact type and default', () => {
    const problems: string[] = []
    for (const [key, schema] of SCHEMA) {
      const rows = ROWS.filter((r) => r.key === key)
      if (rows.length !== 1) {
        problems.push(`${key}: ${rows.length} rows`)
        continue
      }
      const row = rows[0]!
      if (row.type !== typeText(schema)) problems.push(`${key}: type '${row.type}', the schema says '${typeText(schema)}'`)
      // A hook table's required keys (not Optional in HookConfig) are written so, as a provider table's are.
      const required = key.startsWith(HOOK_KEY) && !key.includes('.channels.') && !(OptionalKind in schema)
      const expected = required ? '(required)' : defaultText(schema)
      if (row.default !== expected) problems.push(`${key}: default '${row.default}', the schema says '${expected}'`)
    }
    expect(problems).toEqual([])
    expect(SCHEMA.size).toBeGreaterThan(30)
  })

  test('documents no key the schema does not have', () => {
    const unknown = ROWS.filter((r) => !r.key.startsWith(PROVIDER_KEY) && !SCHEMA.has(r.key) && !hookOptionKeys().includes(r.key)).map((r) => r.key)
    expect(unknown).toEqual([])
  })

  test("documents each provider type's keys: exactly those its table takes", () => {
    expect(ROWS.filter((r) => r.key === `${PROVIDER_KEY}type` && r.providerType === undefined)).toHaveLength(1)
    // The keys every type takes (`type`, `max_in_flight`, `timeout_ms`) are documented once, before the types.
    const common = ROWS.filter((r) => r.key.startsWith(PROVIDER_KEY) && r.providerType === undefined).map((r) => r.key.slice(PROVIDER_KEY.length))
    expect(common).toEqual(['type', 'max_in_flight', 'timeout_ms'])
    for (const type of PROVIDER_TYPES) {
      expect(DOC).toContain(`#### Provider type \`${type}\``)
      const documented = ROWS.filter((r) => r.providerType === type).map((r) => r.key.slice(PROVIDER_KEY.length))
      expect({ type, keys: [...common, ...documented].sort() }).toEqual({ type, keys: providerKeys(type) })
    }
    // The proxy sees what a reader asks for: a type with settings has more than `type`.
    expect(providerKeys('smtp')).toContain('password_env')
  })
})

/** `hooks.NAME.KEY` of every type's own keys (its adapter's `optionKeys`). */
function hookOptionKeys(type?: string): string[] {
  return Object.values(HOOK_ADAPTERS)
    .filter((a) => type === undefined || a.type === type)
    .flatMap((a) => (a.optionKeys ?? []).map((k) => `${HOOK_KEY}${k}`))
}

/** A hook table's key as the example writes it: `channels = { sms = [...] }` stands for its `channels.*` keys. */
function knownHookKey(key: string, type: string | undefined): boolean {
  if (type === undefined) return false
  return SCHEMA.has(key) || [...SCHEMA.keys()].some((k) => k.startsWith(`${key}.`)) || hookOptionKeys(type).includes(key)
}

describe('docs/configuration.md: hooks', () => {
  test("documents each hook type's own keys under its heading", () => {
    for (const adapter of Object.values(HOOK_ADAPTERS)) {
      for (const key of adapter.optionKeys ?? []) expect(ROWS.filter((r) => r.key === `${HOOK_KEY}${key}`).length).toBeGreaterThan(0)
    }
  })
})

describe('otp.config.example.toml', () => {
  const keys = exampleKeys(EXAMPLE)

  test('has only keys the schema or its provider type knows', () => {
    const unknown = keys.filter(({ key, providerType, hookType }) =>
      key.startsWith(PROVIDER_KEY)
        ? providerType === undefined || !providerKeys(providerType).includes(key.slice(PROVIDER_KEY.length))
        : key.startsWith(HOOK_KEY)
          ? !knownHookKey(key, hookType)
          : !SCHEMA.has(key),
    )
    expect(unknown).toEqual([])
    expect(keys.length).toBeGreaterThan(50)
  })

  test('names every key of the schema', () => {
    const named = new Set(keys.map((k) => k.key))
    // `channels = { sms = [...] }` names its keys inline.
    const inline = (k: string) => k.startsWith(`${HOOK_KEY}channels.`) && named.has(`${HOOK_KEY}channels`)
    expect([...SCHEMA.keys()].filter((k) => !named.has(k) && !inline(k))).toEqual([])
  })

  test('shows one commented hook of each type built in', () => {
    for (const type of Object.keys(HOOK_ADAPTERS)) expect(EXAMPLE).toMatch(new RegExp(`^# type = "${type}"`, 'm'))
  })
})
