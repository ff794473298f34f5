/**
 * Scans captured output (a test run's stdout and stderr) for secrets that must
 * never be printed, and exits 1 naming each offending line with the secret
 * itself redacted. Usage: bun scripts/ci/scan-output.ts FILE... (or stdin).
 *
 * What counts (docs/api.md#errors: keys, codes and clear recipients never
 * reach the output):
 * - an API key: `otpd_` + 40 base62 characters, or a bare 40-character base62
 *   body mixing upper case, lower case and digits (a key with its prefix cut);
 * - an unmasked phone number: `+` and 7 to 15 digits (masked ones carry `*`);
 * - an unmasked e-mail address: a local part not touching a `*`;
 * - a code in context: the word "code" followed by 4 to 10 digits, as in
 *   `"code":"482913"`, `code=482913` or `Your code is 482913`;
 * - a `log` provider line, which by design carries the whole message, code included.
 * A bare number cannot be told from a code, so codes are found by their context
 * only; `123456`, the documented code of the public test recipients, is not a secret.
 * Not scanned: the source lines bun quotes around a failing assertion
 * (`  40 |   const paid = ...`): they are the repository's test code, not output
 * the program produced, and they appear only when a test already failed.
 */
import { readFileSync } from 'node:fs'

export interface Finding {
  line: number
  kind: string
  /** The line with every match replaced by [REDACTED:kind]. */
  redacted: string
}

const RULES: [kind: string, pattern: RegExp][] = [
  ['API key', /otpd_[0-9A-Za-z]{40}(?![0-9A-Za-z])/g],
  ['API key body', /(?<![0-9A-Za-z_])(?=[0-9A-Za-z]{0,39}[A-Z])(?=[0-9A-Za-z]{0,39}[a-z])(?=[0-9A-Za-z]{0,39}[0-9])[0-9A-Za-z]{40}(?![0-9A-Za-z])/g],
  ['phone number', /(?<![0-9A-Za-z*])\+[1-9][0-9]{6,14}(?![0-9*])/g],
  ['e-mail address', /(?<![0-9A-Za-z._%+*-])[0-9A-Za-z._%+-]+@[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*\.[A-Za-z]{2,}(?![0-9A-Za-z-])/g],
  ['code', /\bcode\b(?:\W{0,4}|\s+is\s+)[0-9]{4,10}(?![0-9])/gi],
  ['log provider message', /\[otpd log provider\]/g],
]

const SOURCE_EXCERPT = /^ *[0-9]+ \| /
/** Bun's time at the end of a test's line (`(pass) … [1234.55ms]`): a number the words before it do not own. */
const TEST_TIME = / \[[0-9]+(?:\.[0-9]+)?m?s\]$/

export function scan(text: string): Finding[] {
  const findings: Finding[] = []
  text.split('\n').forEach((line, i) => {
    if (SOURCE_EXCERPT.test(line)) return
    let redacted = line.replace(TEST_TIME, '')
    const kinds: string[] = []
    for (const [kind, pattern] of RULES) {
      const next = redacted.replace(pattern, `[REDACTED:${kind}]`)
      if (next !== redacted) kinds.push(kind)
      redacted = next
    }
    if (kinds.length > 0) findings.push({ line: i + 1, kind: kinds.join(', '), redacted })
  })
  return findings
}

if (import.meta.main) {
  const files = process.argv.slice(2)
  const text = files.length > 0 ? files.map((f) => readFileSync(f, 'utf8')).join('\n') : await Bun.stdin.text()
  const findings = scan(text)
  for (const f of findings) console.error(`scan-output: line ${f.line}: ${f.kind}: ${f.redacted.slice(0, 300)}`)
  if (findings.length > 0) {
    console.error(`scan-output: FAILED: a key, a code or an unmasked recipient on ${findings.length} line${findings.length === 1 ? '' : 's'} of the output`)
    process.exit(1)
  }
  console.log(`scan-output: OK: ${text.split('\n').length} lines, no key, code or unmasked recipient`)
}
