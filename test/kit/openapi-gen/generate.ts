/**
 * Generates TypeScript types from an OpenAPI document with openapi-typescript
 * and its default options, as a user of otpd would:
 * `bun --preload ./test/kit/openapi-gen/typescript5.ts test/kit/openapi-gen/generate.ts openapi.json api.d.ts`
 */
import openapiTS, { astToString } from 'openapi-typescript'

const [input, output] = process.argv.slice(2)
if (!input || !output) throw new Error('usage: generate.ts <openapi.json> <out.d.ts>')
const ast = await openapiTS(await Bun.file(input).json())
await Bun.write(output, astToString(ast))
