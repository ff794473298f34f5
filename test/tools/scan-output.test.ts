/**
 * scripts/ci/scan-output.ts, which .ci/run applies to the captured output of the
 * whole test run. Samples are built at run time and titles never hold them, so
 * this file prints nothing the scanner would flag.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { scan } from '../../scripts/ci/scan-output.ts'

const body = 'Ab3dE9xQ'.repeat(5) // 40 base62 characters, mixed case and digits
const key = 'otpd_' + body
const phone = '+1' + '4155550123'
const email = ['ann', 'example.com'].join('@')

test.each([
  ['a key in a log line', `auth failed for ${key} at 10:00`, 'API key'],
  ['a key in JSON', JSON.stringify({ key }), 'API key'],
  ['a key body without its prefix', `token=${body};`, 'API key body'],
  ['a phone number', `sent to ${phone} ok`, 'phone number'],
  ['a test phone number', `recipient "+1555010000${1}"`, 'phone number'],
  ['an e-mail address', `recipient=${email}`, 'e-mail address'],
  ['a test e-mail address', `to ${'fail'}@otpd.test`, 'e-mail address'],
  ['a code in JSON', '{"verification_id":"x","code":"' + '4829' + '13"}', 'code'],
  ['a code as a number', '{"code":' + '4829}', 'code'],
  ['a code in a sentence', 'Your Code is ' + '48291307', 'code'],
  ['a code after =', 'code=' + '0042', 'code'],
  ['a log provider line', '[otpd log provider] sms to +1555****001 verification=x: "..."', 'log provider message'],
])('flags %s', (_what, line, kind) => {
  const found = scan(`fine\n${line}\nfine`)
  expect(found.map((f) => [f.line, f.kind])).toEqual([[2, kind]])
  expect(found[0]!.redacted).toContain(`[REDACTED:${kind}]`)
  // The report never repeats the secret.
  for (const secret of [key, body, phone, email, '482913', '48291307']) expect(found[0]!.redacted).not.toContain(secret)
})

test.each([
  ['a masked phone number', 'to +1555****001 and +4420*****750'],
  ['masked e-mail addresses', 'to s*****s@otpd.test, **@example.com and *@example.com'],
  ['a key prefix', 'key 3 (Ab3dE9xQ) is now revoked'],
  ['a SHA-1 in hex', 'commit ' + 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3'],
  ['a UUID', 'verification 6f1c2a9e-1b2c-4d3e-8f90-123456789abc'],
  ['test titles about codes', '(pass) a custom code is ignored; 123456 still works [28.77ms]'],
  ["a title ending with 'code' before a slow test's time", '(pass) no longer verifies with the test code [1234.55ms]'],
  ['a code length', 'code_length 8, code length 10, 4-10 digit codes'],
  ['a too long number after code', '{"code":"12345678901"}'],
  ['package versions and scopes', 'elysia@1.4.30 @sinclair/typebox bun v1.4.5'],
  ['timings and counts', 'Ran 414 tests across 22 files. [28.92s] +0000'],
  ['test source quoted by bun around a failure', `40 |   const paid = await post(url, '/api/v1/send', victim, { channel: 'sms', recipient: '${phone}' })`],
])('leaves %s alone', (_what, line) => {
  expect(scan(line)).toEqual([])
})

test('the command fails naming the line, and passes clean output', () => {
  const script = join(import.meta.dir, '..', '..', 'scripts', 'ci', 'scan-output.ts')
  const bad = Bun.spawnSync(['bun', script], { stdin: new TextEncoder().encode(`ok\nsend to ${phone}\n`) })
  expect(bad.exitCode).toBe(1)
  expect(bad.stderr.toString()).toBe(
    'scan-output: line 2: phone number: send to [REDACTED:phone number]\n' +
      'scan-output: FAILED: a key, a code or an unmasked recipient on 1 line of the output\n',
  )
  const good = Bun.spawnSync(['bun', script], { stdin: new TextEncoder().encode('ok\n(pass) masked +1555****001\n') })
  expect(good.exitCode).toBe(0)
  expect(good.stdout.toString()).toBe('scan-output: OK: 3 lines, no key, code or unmasked recipient\n')
})
