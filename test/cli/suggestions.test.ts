/**
 * An unknown command is refused with the nearest real one
 * (docs/operating.md#cli): by edit distance, by the word other tools use, or
 * by the group that has it; exit status 1 and nothing on stdout.
 */
import { expect, test } from 'bun:test'
import { cliEnv } from '../kit/cli.ts'

const CASES: [string[], string][] = [
  [['credits', 'show'], "otpd: error: unknown command 'show' (did you mean otpd credits balance?)\n(run otpd credits --help for usage)\n"],
  [['keys', 'lst'], "otpd: error: unknown command 'lst' (did you mean otpd keys list?)\n(run otpd keys --help for usage)\n"],
  [['keys', 'rm', '3'], "otpd: error: unknown command 'rm' (did you mean otpd keys revoke?)\n(run otpd keys --help for usage)\n"],
  [['webhooks', 'delete', '1'], "otpd: error: unknown command 'delete' (did you mean otpd webhooks remove?)\n(run otpd webhooks --help for usage)\n"],
  [['fraud', 'show'], "otpd: error: unknown command 'show' (did you mean otpd fraud status?)\n(run otpd fraud --help for usage)\n"],
  [['credit', 'balance'], "otpd: error: unknown command 'credit' (did you mean otpd credits?)\n(run with --help for usage)\n"],
  [['balance'], "otpd: error: unknown command 'balance' (did you mean otpd credits balance?)\n(run with --help for usage)\n"],
  [['accounts', 'frobnicate'], "otpd: error: unknown command 'frobnicate'\n(run otpd accounts --help for usage)\n"],
]

test('an unknown command names the nearest real one', async () => {
  const env = await cliEnv()
  for (const [args, stderr] of CASES) {
    const r = env.run(...args)
    expect([args.join(' '), r.code, r.stdout, r.stderr]).toEqual([args.join(' '), 1, '', stderr])
  }
}, 30_000)
