/**
 * Brute-force bound (docs/api.md#hardening, docs/reliability.md) against two
 * compiled server processes on one database, default verify limits (5 per
 * verification, 100 per recipient per 24 h). The attacker may create as many
 * verifications as it likes (send limits raised for the demonstration) and
 * spreads guesses over them so no verification locks by itself:
 *
 *   1. 60 verifications of one recipient, 300 parallel wrong guesses -> exactly 100 compared
 *   2. the right code of any of them is refused (429, retry_after ~ 24 h), and a
 *      new send to the recipient is refused too (429, the same wait): no code is sold
 *      that could not be verified
 *   3. another recipient of the same account is unaffected
 *
 * Usage: bun scripts/proofs/brute-force.ts
 */
import { cliJson, makeEnv, post, report, startServer, unthrottledNoop } from '../kit/otpd.ts'

const env = makeEnv('brute', unthrottledNoop())
const key = cliJson(env, 'keys', 'create', '--init').key as string
cliJson(env, 'credits', 'add', '1000')
const servers = [await startServer(env), await startServer(env)]
const url = (i: number) => servers[i % 2]!.url
const VICTIM = '+14155550123'
const CODE = '4711'
const violations: string[] = []

const ids: string[] = []
for (let v = 0; v < 60; v++) ids.push((await post(url(v), '/api/v1/send', key, { channel: 'sms', recipient: VICTIM, code: CODE })).json.verification_id)
const t0 = Date.now()
const guesses = await Promise.all(
  Array.from({ length: 300 }, (_, i) =>
    post(url(i), '/api/v1/verify', key, { verification_id: ids[i % 60]!, code: String(1000 + ((i * 7) % 9000)).replace(CODE, '0000') }),
  ),
)
const compared = guesses.filter((r) => r.status === 200 && r.json.message === 'Invalid code').length
const lockedAnswers = guesses.filter(
  (r) => r.status === 429 && typeof r.json.message === 'string' && r.json.message.startsWith('Too many failed attempts'),
).length
const other = guesses.length - compared - lockedAnswers
if (compared !== 100) violations.push(`${compared} guesses compared, expected 100`)
if (other !== 0) violations.push(`${other} answers neither Invalid code nor the lockout`)

// One that did not lock by itself (5 wrong codes of its own): only the cap holds it.
const own = ids.map((_, v) => guesses.filter((r, i) => i % 60 === v && r.status === 200).length)
const right = await post(url(1), '/api/v1/verify', key, { verification_id: ids[own.findIndex((n) => n < 5)]!, code: CODE })
if (right.status !== 429) violations.push(`the right code of a verification answered ${right.status} while the cap is full`)
const retryAfter = Number(right.json.retry_after)
const expected = 86_400 - Math.floor((Date.now() - t0) / 1000)
if (!(retryAfter <= 86_400 && retryAfter >= expected - 5)) violations.push(`retry_after ${retryAfter}, expected about ${expected}`)
const fresh = await post(url(0), '/api/v1/send', key, { channel: 'sms', recipient: VICTIM, code: CODE })
const sendWait = Number(fresh.json.retry_after)
if (fresh.status !== 429 || !String(fresh.json.error).startsWith('Rate limit exceeded: too many failed attempts for this recipient.'))
  violations.push(`a send while the cap is full answered ${fresh.status} ${JSON.stringify(fresh.json)}`)
else if (!(sendWait <= 86_400 && sendWait >= expected - 5)) violations.push(`send retry_after ${sendWait}, expected about ${expected}`)

const bystander = await post(url(0), '/api/v1/send', key, { channel: 'sms', recipient: '+14155550124', code: CODE })
const ok = await post(url(1), '/api/v1/verify', key, { verification_id: bystander.json.verification_id, code: CODE })
if (ok.json.verified !== true) violations.push(`another recipient answered ${ok.status} ${JSON.stringify(ok.json)}`)

for (const s of servers) s.proc.kill('SIGTERM')
await Promise.all(servers.map((s) => s.proc.exited))
env.close()

report(
  'brute-force bound',
  {
    'verifications of one recipient': 60,
    'parallel wrong guesses (2 processes)': guesses.length,
    'guesses compared (Invalid code)': compared,
    'refused with the lockout 429': lockedAnswers,
    'right code of a verification': `${right.status}, retry_after ${retryAfter} s`,
    'a new send to the recipient': `${fresh.status}, retry_after ${sendWait} s`,
    'another recipient, same account': ok.json.verified === true ? 'verified' : `${ok.status}`,
    'bound per recipient': '100 compared guesses per rolling 24 h, whatever the number of codes',
    'chance of a hit per day': '<= 100 / 10^6 = 0.01 % (6 digits); 100 / 10^4 = 1 % (4 digits)',
  },
  violations,
)
