/**
 * A name that matches nothing gets the nearest real one (docs/configuration.md#checking-a-config):
 * unknown keys in the file, unknown keys of a provider table, and unknown
 * OTPD_ variables, by one rule (lib/nearest-name.ts).
 */
import { expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/app/load-config.ts'
import { nearestName } from '../../src/lib/nearest-name.ts'
import { configProblems } from '../kit/config.ts'
import { tempDir } from '../kit/cleanup.ts'

function problemsOf(toml: string): string[] {
  const d = tempDir('otpd-suggest-')
  writeFileSync(join(d, 'otp.config.toml'), toml)
  return configProblems(() => loadConfig({ file: join(d, 'otp.config.toml'), env: {} }))
}

test.each([
  ['[server]\nlistn = "127.0.0.1:8080"\n', 'server.listn is not a known setting (did you mean server.listen?)'],
  ['[limits]\nrecipient_per_minut = 2\n', 'limits.recipient_per_minut is not a known setting (did you mean limits.recipient_per_minute?)'],
  ['[servr]\nlisten = "127.0.0.1:8080"\n', 'servr is not a known setting (did you mean server?)'],
  ['[server.tsl]\ncert = "c.pem"\n', 'server.tsl is not a known setting (did you mean server.tls?)'],
  ['[limits]\nbogus = 1\n', 'limits.bogus is not a known setting'],
])('%j: %s', (toml, problem) => {
  expect(problemsOf(toml)).toEqual([problem])
})

test("a provider table's unknown key names the nearest key of its type", () => {
  const p = problemsOf(
    '[providers.mail]\ntype = "smtp"\nhots = "smtp.example.com"\nhost = "smtp.example.com"\nfrom = "otp@example.com"\n[channels]\nemail = ["mail"]\n',
  )
  expect(p).toEqual(["providers.mail.hots is not a setting of a 'smtp' provider (did you mean providers.mail.host?)"])
})

test('OTPD_ variables and file keys are matched by the same rule', () => {
  const { warnings } = loadConfig({ env: { OTPD_SERVER_LISTN: '127.0.0.1:9000' } })
  expect(warnings).toEqual(['environment variable OTPD_SERVER_LISTN matches no setting and is ignored (did you mean OTPD_SERVER__LISTEN?)'])
  expect(nearestName('server.listn', ['server.listen', 'server.tls'])).toBe('server.listen')
  expect(nearestName('nonsense', ['server.listen', 'server.tls'])).toBeUndefined()
})
