/**
 * A small JSON Schema checker for the OpenAPI test: validates plain JSON (as a
 * client reads the document) rather than TypeBox objects, so the test proves
 * the served document, not the models. Covers the keywords the document uses
 * and throws on any other, so a keyword cannot be silently ignored.
 */
type Schema = Record<string, any>

// `discriminator` only helps a reader pick the `oneOf` branch; the branches themselves decide.
const ANNOTATIONS = new Set(['description', 'default', 'examples', 'title', 'discriminator'])
const KNOWN = new Set([
  '$ref',
  'type',
  'const',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'properties',
  'required',
  'additionalProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'items',
  'minItems',
  'maxItems',
])

function typeOk(type: string, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string'
    case 'integer':
      return Number.isInteger(v)
    case 'number':
      return typeof v === 'number'
    case 'boolean':
      return typeof v === 'boolean'
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v)
    case 'array':
      return Array.isArray(v)
    case 'null':
      return v === null
    default:
      throw new Error(`unsupported type ${type}`)
  }
}

/** Problems with `value` under `schema`; [] when it conforms. `root` resolves `#/...` references. */
export function check(schema: Schema, value: unknown, root: Schema, path = ''): string[] {
  for (const k of Object.keys(schema)) if (!KNOWN.has(k) && !ANNOTATIONS.has(k)) throw new Error(`unsupported keyword ${k} at ${path}`)
  if (schema.$ref) {
    const target = (schema.$ref as string)
      .slice(2)
      .split('/')
      .reduce((n: any, part) => n?.[part], root)
    if (!target) throw new Error(`unresolved $ref ${schema.$ref}`)
    return check(target, value, root, path)
  }
  const out: string[] = []
  const fail = (msg: string) => out.push(`${path || '/'}: ${msg}`)
  if (schema.type !== undefined && !typeOk(schema.type, value)) return [`${path || '/'}: expected ${schema.type}, got ${JSON.stringify(value)}`]
  if ('const' in schema && value !== schema.const) fail(`expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`)
  if (schema.enum && !schema.enum.includes(value)) fail(`not one of ${JSON.stringify(schema.enum)}`)
  if (typeof value === 'string') {
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) fail(`${JSON.stringify(value)} does not match ${schema.pattern}`)
    if (schema.minLength !== undefined && [...value].length < schema.minLength) fail('too short')
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) fail('too long')
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) fail(`below ${schema.minimum}`)
    if (schema.maximum !== undefined && value > schema.maximum) fail(`above ${schema.maximum}`)
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>
    for (const r of schema.required ?? []) if (!(r in obj)) fail(`missing ${r}`)
    for (const [k, v] of Object.entries(obj)) {
      const sub = schema.properties?.[k]
      if (sub) out.push(...check(sub, v, root, `${path}/${k}`))
      else if (schema.additionalProperties === false) fail(`unexpected property ${k}`)
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) fail(`fewer than ${schema.minItems} items`)
    if (schema.maxItems !== undefined && value.length > schema.maxItems) fail(`more than ${schema.maxItems} items`)
    if (schema.items) value.forEach((v, i) => out.push(...check(schema.items, v, root, `${path}/${i}`)))
  }
  if (schema.allOf) for (const s of schema.allOf) out.push(...check(s, value, root, path))
  if (schema.anyOf && !schema.anyOf.some((s: Schema) => check(s, value, root, path).length === 0)) fail('matches no alternative of anyOf')
  if (schema.oneOf && schema.oneOf.filter((s: Schema) => check(s, value, root, path).length === 0).length !== 1) fail('does not match exactly one of oneOf')
  return out
}

/** Follows a local `$ref` (`#/components/...`) inside `doc`, as often as it takes. */
export function resolveRef(doc: Record<string, any>, node: Record<string, any>): Record<string, any> {
  return node.$ref
    ? resolveRef(
        doc,
        (node.$ref as string)
          .slice(2)
          .split('/')
          .reduce((n: any, p: string) => n?.[p], doc),
      )
    : node
}
