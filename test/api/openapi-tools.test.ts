/**
 * The served OpenAPI document through the tools people point at it:
 * Redocly's linter with its recommended rules, the OpenAPI 3.1 schema
 * (@seriousme/openapi-schema-validator, from npm, so CI needs nothing else), and a client
 * generated with openapi-typescript (default options) and called with
 * openapi-fetch against a real server on loopback. Each tool also meets a
 * broken document, so the test can fail.
 */
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createHarness, type Harness } from '../kit/harness.ts'

const ROOT = join(import.meta.dir, '..', '..')
let h: Harness
let base: string
let dir: string
let docFile: string
let doc: Record<string, any>

beforeAll(async () => {
  h = await createHarness({ credits: 5 })
  base = h.listen()
  const res = await fetch(`${base}/api/v1/openapi.json`)
  expect(res.status).toBe(200)
  doc = (await res.json()) as Record<string, any>
  // Inside the repository, so the generated client resolves openapi-fetch from node_modules.
  dir = mkdtempSync(join(import.meta.dir, '.openapi-tmp-'))
  docFile = join(dir, 'openapi.json')
  writeFileSync(docFile, JSON.stringify(doc))
})
afterAll(() => {
  h?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

function run(cmd: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync(cmd, { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', ...env } })
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() }
}

/** As run(), without blocking this process: the server under test answers from its event loop. */
async function runAsync(cmd: string[], env: Record<string, string>) {
  const p = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { code, out, err }
}

/** A copy of the document with one fault, written beside it. */
function broken(name: string, breakIt: (d: Record<string, any>) => void): string {
  const d = structuredClone(doc)
  breakIt(d)
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(d))
  return file
}

function lint(file: string): { errors: number; warnings: number; problems: unknown[] } {
  // No config file: Redocly's built-in `recommended` rules. It needs no network (checked with `unshare -n`).
  const r = run([join(ROOT, 'node_modules', '.bin', 'redocly'), 'lint', file, '--format=json'])
  const report = JSON.parse(r.out) as { totals: { errors: number; warnings: number }; problems: unknown[] }
  return { ...report.totals, problems: report.problems }
}

test('redocly lint (recommended rules): no error, no warning', () => {
  const r = lint(docFile)
  expect(r.problems).toEqual([])
  expect([r.errors, r.warnings]).toEqual([0, 0])
  // The linter sees faults: an example that its schema refuses, an operation without responses.
  const bad = lint(
    broken('bad-lint.json', (d) => {
      d.paths['/api/v1/send'].post.responses['200'].content['application/json'].example.expires_at = 'tomorrow'
      d.paths['/healthz'].get.responses = {}
    }),
  )
  expect(bad.errors + bad.warnings).toBeGreaterThan(0)
}, 60_000)

test('the document validates against the OpenAPI 3.1 schema', async () => {
  const ok = new Validator()
  const result = await ok.validate(docFile)
  expect(result).toEqual({ valid: true })
  expect(ok.version).toBe('3.1')
  const bad = await new Validator().validate(broken('bad-schema.json', (d) => (d.paths['/healthz'].get.responses['200'].content = 'json')))
  expect(bad.valid).toBe(false)
}, 60_000)

const CLIENT = `
import createClient from 'openapi-fetch'
import type { paths } from './api.d.ts'

const client = createClient<paths>({ baseUrl: process.env.OTPD_BASE!, headers: { authorization: \`Bearer \${process.env.OTPD_KEY}\` } })

// A send body without expires_in (or any optional field) typechecks.
const sent = await client.POST('/api/v1/send', { body: { channel: 'sms', recipient: '+15550100001' } })
if (!sent.data) throw new Error(\`send: \${sent.response.status} \${JSON.stringify(sent.error)}\`)
const id: string = sent.data.verification_id
const status = await client.GET('/api/v1/verifications/{verification_id}', { params: { path: { verification_id: id } } })
if (!status.data) throw new Error(\`status: \${status.response.status} \${JSON.stringify(status.error)}\`)
const verified = await client.POST('/api/v1/verify', { body: { verification_id: id, code: '123456' } })
if (!verified.data) throw new Error(\`verify: \${verified.response.status} \${JSON.stringify(verified.error)}\`)
const after = await client.GET('/api/v1/verifications/{verification_id}', { params: { path: { verification_id: id } } })

const other = await client.POST('/api/v1/send', { body: { channel: 'email', recipient: 'success@otpd.test' }, headers: { 'Idempotency-Key': 'client-test-1' } })
if (!other.data) throw new Error(\`send 2: \${other.response.status}\`)
const canceled = await client.POST('/api/v1/verifications/{verification_id}/cancel', { params: { path: { verification_id: other.data.verification_id } } })
if (!canceled.data) throw new Error(\`cancel: \${canceled.response.status} \${JSON.stringify(canceled.error)}\`)
const late = await client.POST('/api/v1/verify', { body: { verification_id: other.data.verification_id, code: '123456' } })

console.log(JSON.stringify({
  status: status.data.status, delivery: status.data.delivery, channel: status.data.channel,
  verified: verified.data.verified, message: verified.data.message,
  after: after.data?.status,
  canceled: canceled.data.status,
  late: { status: late.response.status, error: late.error && 'error' in late.error ? late.error.error : null },
}))
`

const WRONG = `
import type { paths } from './api.d.ts'
type SendBody = paths['/api/v1/send']['post']['requestBody']['content']['application/json']
export const ok: SendBody[] = [
  { channel: 'sms', recipient: '+14155550123' },
  { channel: 'email', recipient: 'ann@example.com', expires_in: 600, ip: '203.0.113.7' },
]
// @ts-expect-error: no such channel
export const fax: SendBody = { channel: 'fax', recipient: '+14155550123' }
// @ts-expect-error: recipient is required
export const noRecipient: SendBody = { channel: 'voice' }

// The narrowed 429 bodies: retry_after is a required number (send, and the per-key limit on verify).
type Send429 = paths['/api/v1/send']['post']['responses']['429']['content']['application/json']
type Verify429 = paths['/api/v1/verify']['post']['responses']['429']['content']['application/json']
type VerifyKeyLimited = Extract<Verify429, { error: unknown }>
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T]
export const sendRetryRequired: 'retry_after' extends RequiredKeys<Send429> ? true : false = true
export const verifyRetryRequired: 'retry_after' extends RequiredKeys<VerifyKeyLimited> ? true : false = true
export const sendRetry = (b: Send429): number => b.retry_after
export const verifyRetry = (b: VerifyKeyLimited): number => b.retry_after
// @ts-expect-error: retry_after is a number
export const sendRetryText: Send429['retry_after'] = '30'
`

/** Generates api.d.ts from the served document and writes the client beside it (once). */
let generated: { code: number | null; err: string } | undefined
function generateClient() {
  if (!generated) {
    const gen = run(['bun', '--preload', './test/kit/openapi-gen/typescript5.ts', 'test/kit/openapi-gen/generate.ts', docFile, join(dir, 'api.d.ts')])
    generated = { code: gen.code, err: gen.err }
    writeFileSync(join(dir, 'client.ts'), CLIENT)
  }
  expect(generated.err).toBe('')
  expect(generated.code).toBe(0)
}

test('openapi-typescript (default options) generates types a client typechecks against', () => {
  generateClient()
  const types = readFileSync(join(dir, 'api.d.ts'), 'utf8')
  expect(types).toContain('"/api/v1/verifications/{verification_id}/cancel"')
  writeFileSync(join(dir, 'wrong.ts'), WRONG)
  const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }))
  const tsc = run([join(ROOT, 'node_modules', '.bin', 'tsc'), '-p', join(dir, 'tsconfig.json')])
  expect(tsc.out + tsc.err).toBe('')
  expect(tsc.code).toBe(0)
  // The typecheck can fail: with the expectations removed, the wrong bodies are errors.
  writeFileSync(join(dir, 'wrong.ts'), WRONG.replaceAll('// @ts-expect-error', '//'))
  const bad = run([join(ROOT, 'node_modules', '.bin', 'tsc'), '-p', join(dir, 'tsconfig.json')])
  expect(bad.out).toContain('wrong.ts')
  expect(bad.code).not.toBe(0)
  writeFileSync(join(dir, 'wrong.ts'), WRONG)
}, 120_000)

// Needs the status and cancel routes (docs/api.md#verification-status, docs/api.md#cancel).
test('a client generated with openapi-typescript and called with openapi-fetch goes through send, status, verify and cancel', async () => {
  generateClient()
  const r = await runAsync(['bun', join(dir, 'client.ts')], { OTPD_BASE: base, OTPD_KEY: h.key })
  expect(r.err).toBe('')
  expect(r.code).toBe(0)
  expect(JSON.parse(r.out)).toEqual({
    status: 'pending',
    delivery: null,
    channel: 'sms',
    verified: true,
    message: 'Code verified successfully',
    after: 'approved',
    canceled: 'canceled',
    late: { status: 404, error: 'Verification not found' },
  })
}, 60_000)
