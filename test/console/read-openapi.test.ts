/**
 * The console's read paths for the OpenAPI document (tag Console): merged
 * into the API's document they make a valid OpenAPI 3.1 document, and their
 * parameters are the ones the routes accept.
 */
import { Validator } from '@seriousme/openapi-schema-validator'
import { expect, test } from 'bun:test'
import { buildOpenApi, consoleReadPaths } from '../../src/app/openapi.ts'
import { CONSOLE_TAG } from '../../src/console/read-openapi.ts'

test('merged into the API document, the console read paths are valid OpenAPI 3.1 under the Console tag', async () => {
  const doc = buildOpenApi('1.0.0') as any
  doc.tags.push(CONSOLE_TAG)
  Object.assign(doc.paths, consoleReadPaths())
  doc.components.securitySchemes.consoleSession = { type: 'apiKey', in: 'cookie', name: 'otpd_console' }
  const v = new Validator()
  expect(await v.validate(JSON.parse(JSON.stringify(doc)))).toEqual({ valid: true })
  const paths = consoleReadPaths()
  expect(Object.keys(paths).sort()).toEqual([
    '/console/api/fraud',
    '/console/api/overview',
    '/console/api/system',
    '/console/api/verifications',
    '/console/api/verifications/{verification_id}',
    '/console/api/webhooks',
    '/console/api/workflows',
  ])
  for (const p of Object.values(paths) as any[]) expect(p.get.tags).toEqual(['Console'])
  const search = (paths['/console/api/verifications'] as any).get.parameters.map((x: any) => x.name)
  // No recipient in a URL: that search is a POST (docs/console.md#verifications).
  expect(search).toEqual(['period', 'account', 'id', 'country', 'status', 'cursor', 'limit'])
  expect((paths['/console/api/overview'] as any).get.parameters[0].schema.enum).toEqual(['1h', '24h', '7d', '30d'])
})
