/**
 * Body checks for the console's JSON API: a compiled TypeBox schema per body
 * (console/models.ts), and the first problem in words. A field's schema may
 * carry `message`, the sentence its 400 gives; a field the schema does not
 * know is named.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string }

export type BodyCheck<S extends TSchema> = (fields: Record<string, unknown>) => Checked<Static<S>>

export function bodyCheck<S extends TSchema>(schema: S): BodyCheck<S> {
  const compiled = TypeCompiler.Compile(schema)
  const properties = (schema.properties ?? {}) as Record<string, TSchema & { message?: string }>
  return (fields) => {
    if (compiled.Check(fields)) return { ok: true, value: fields as Static<S> }
    const first = compiled.Errors(fields).First()!
    const name = first.path.split('/')[1] ?? ''
    const field = properties[name]
    if (field === undefined) return { ok: false, error: name === '' ? 'the body does not match the request schema' : `unknown field '${name}'` }
    if (fields[name] === undefined) return { ok: false, error: `${name} is required` }
    return { ok: false, error: field.message ?? `${name}: ${first.message}` }
  }
}
