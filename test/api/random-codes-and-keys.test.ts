/** Codes and keys are uniform, with no modulo bias (docs/api.md#hardening). */
import { expect, test } from 'bun:test'
import { randomBase62, randomDigits } from '../../src/lib/random.ts'

/** Pearson's chi-square of observed counts against a uniform distribution. */
function chiSquare(text: string, alphabet: string): number {
  const counts = new Map<string, number>([...alphabet].map((c) => [c, 0]))
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1)
  expect(counts.size).toBe(alphabet.length) // nothing outside the alphabet
  const expected = text.length / alphabet.length
  return [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0)
}

test('generated codes have the asked length and only digits', () => {
  for (let n = 4; n <= 10; n++) expect(randomDigits(n)).toMatch(new RegExp(`^[0-9]{${n}}$`))
})

// `byte % 10` would give 0-5 a 26/256 chance and 6-9 25/256: chi-square about 73
// on 200,000 digits. Uniform digits exceed 50 (9 degrees of freedom) with p < 1e-7.
test('digits are uniform', () => {
  expect(chiSquare(randomDigits(200_000), '0123456789')).toBeLessThan(50)
})

// `byte % 62` would give the first 8 characters 5/256 and the rest 4/256: chi-square
// in the thousands. Uniform characters exceed 150 (61 degrees of freedom) with p < 1e-8.
test('key characters are uniform base62', () => {
  expect(chiSquare(randomBase62(310_000), '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz')).toBeLessThan(150)
})
