/**
 * What Kratos sends through the Jsonnet body of docs/integrations.md#ory-kratos,
 * reproduced in TypeScript: npm has no well-kept Jsonnet evaluator (the one
 * binding there is a native addon with few users), so the body is written as
 * plain field picks that this function mirrors line by line, and
 * kratos-adapter.test.ts holds it to the bytes a real Jsonnet evaluator
 * produced from the same template data (fixtures/kratos/out-*.txt).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export const KRATOS_FIXTURES = join(import.meta.dir, 'fixtures', 'kratos')
export const KRATOS_BODY_JSONNET = readFileSync(join(KRATOS_FIXTURES, 'body.jsonnet'), 'utf8')

const CODES = ['login_code', 'registration_code', 'verification_code', 'recovery_code', 'expires_in_minutes']

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

/** Kratos's `ctx` (its httpDataModel as JSON) through the documented Jsonnet. */
export function kratosBody(ctx: Record<string, Json>): string {
  const data = typeof ctx.template_data === 'object' && ctx.template_data !== null && !Array.isArray(ctx.template_data) ? ctx.template_data : {}
  const picked = Object.fromEntries(CODES.filter((name) => name in data).map((name) => [name, data[name] as Json]))
  const out = {
    recipient: ctx.recipient ?? null,
    message_type: ctx.message_type ?? null,
    template_type: ctx.template_type ?? null,
    subject: ctx.subject ?? null,
    body: ctx.body ?? null,
    template_data: picked,
  }
  return `${manifest(out, '')}\n`
}

/** Jsonnet's output form: keys sorted, three spaces a level, `{ }` for an empty object. */
function manifest(value: Json, indent: string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const inner = `${indent}   `
  if (Array.isArray(value)) return value.length === 0 ? '[ ]' : `[\n${value.map((v) => inner + manifest(v, inner)).join(',\n')}\n${indent}]`
  const keys = Object.keys(value).sort()
  if (keys.length === 0) return '{ }'
  return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${manifest(value[k] as Json, inner)}`).join(',\n')}\n${indent}}`
}

/** Kratos's `ctx` as its json.Encoder writes it (compact, a trailing newline), from a fixture. */
export function kratosContext(name: string): Record<string, Json> {
  return JSON.parse(readFileSync(join(KRATOS_FIXTURES, `ctx-${name}.txt`), 'utf8'))
}

export function kratosOutput(name: string): string {
  return readFileSync(join(KRATOS_FIXTURES, `out-${name}.txt`), 'utf8')
}
