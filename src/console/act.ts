/**
 * Runs a console action and answers it: an OperatorError (the operator's
 * mistake) becomes its 4xx with the service's own sentence, the same one the
 * CLI prints; a fault becomes the API's generic 500, its cause logged with
 * the request id (http/reply.ts respond).
 */
import type { TSchema } from '@sinclair/typebox'
import { Msg } from '../http/error-texts.ts'
import { errorReply, respond, type Reply } from '../http/reply.ts'
import type { Logger } from '../lib/logger.ts'
import { OperatorError, type OperatorErrorKind } from '../otp/operator-error.ts'
import { withSecurityHeaders } from './http.ts'
import type { BodyCheck, Checked } from './validate.ts'

const STATUS: Record<OperatorErrorKind, number> = { invalid: 400, not_found: 404, conflict: 409 }

export async function act(logger: Logger, request: Request, run: () => Promise<Reply>): Promise<Response> {
  const res = await respond(logger, request, Msg.internal, async () => {
    try {
      return await run()
    } catch (err) {
      if (err instanceof OperatorError) return errorReply(STATUS[err.kind], err.message)
      throw err
    }
  })
  return withSecurityHeaders(res)
}

export class BadRequest extends OperatorError {}

/** The checked body, or an OperatorError (400) with the check's sentence. */
export function checked<S extends TSchema>(check: BodyCheck<S>, fields: Record<string, unknown>): Checked<S['static']> & { ok: true } {
  const c = check(fields)
  if (!c.ok) throw new BadRequest(c.error)
  return c
}

/**
 * An HTML form's fields (every value a string) as the JSON the schema wants:
 * '' is null where null is allowed (else left out), digits a number, true /
 * false / on / off a boolean, a comma-separated text a list.
 */
export function fromForm(schema: TSchema, fields: Record<string, unknown>, form: boolean): Record<string, unknown> {
  if (!form) return fields
  const out: Record<string, unknown> = {}
  const props = (schema.properties ?? {}) as Record<string, TSchema>
  for (const [name, value] of Object.entries(fields)) {
    const s = props[name]
    if (s === undefined || typeof value !== 'string') {
      out[name] = value
      continue
    }
    const kinds = new Set<string>((s.anyOf ?? [s]).map((x: TSchema) => String(x.type)))
    const v = value.trim()
    if (v === '') {
      if (kinds.has('null')) out[name] = null
      continue
    }
    if (kinds.has('integer') && /^-?[0-9]+$/.test(v)) out[name] = Number(v)
    else if (kinds.has('boolean') && /^(true|false|on|off)$/.test(v)) out[name] = v === 'true' || v === 'on'
    else if (kinds.has('array')) out[name] = v.split(',').map((x) => x.trim().toUpperCase())
    else out[name] = value
  }
  return out
}
