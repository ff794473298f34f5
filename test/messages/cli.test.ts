/**
 * The operator's side of messages (docs/messages.md): `otpd messages check`,
 * `otpd accounts set --locale / --otp-domain`, and SIGHUP reading the
 * templates again in a running server.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliEnv, post, startServer } from '../kit/cli.ts'

setDefaultTimeout(30_000)

test("messages check: a template with 'ó' is UCS-2, its segments at the longest code, the character and a GSM-7 suggestion", async () => {
  const env = await cliEnv('[messages.templates]\nsms = { es = "{code} es tu código de {app}" }\nsubject = { es = "Tu código" }\n', {}, { noDatabase: true })
  const r = env.run('messages', 'check')
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  expect(r.stdout).toBe(
    'sms es (config): UCS-2, 47 characters, 1 segment with a 10-digit code\n' +
      '  forces UCS-2: ó (U+00F3)\n' +
      '  GSM-7 suggestion: "{code} es tu codigo de {app}" (1 segment)\n' +
      'subject es (config): ok\n',
  )
})

test('messages check: over sms_max_segments exits 1; --json says the same; a long text with ó is 2 segments, its suggestion 1', async () => {
  const text = `{code} ${'ó'.repeat(60)}`
  const env = await cliEnv(
    `[messages]\nsms_max_segments = 1\notp_domain = "example.com"\n[messages.templates]\nsms = { es = "${text}" }\n`,
    {},
    { noDatabase: true },
  )
  const r = env.run('messages', 'check', '--app', 'acme')
  expect(r.code).toBe(1)
  expect(r.stdout.split('\n')[0]).toBe('sms es (config): UCS-2, 97 characters, 2 segments with a 10-digit code: over messages.sms_max_segments (1)')
  const j = JSON.parse(env.run('messages', 'check', '--json').stdout)
  expect(j).toMatchObject({ ok: false, sms_max_segments: 1, otp_domain: 'example.com' })
  expect(j.templates[0]).toMatchObject({ kind: 'sms', locale: 'es', encoding: 'UCS-2', segments: 2, over_limit: true, forces_ucs2: ['ó'] })
  expect(j.templates[0].suggestion).toEqual({ text: `{code} ${'o'.repeat(60)}`, segments: 1 })
})

test('messages check: a wrong template is reported with its origin and exits 1; --all lists the built-in texts', async () => {
  const dir = (await cliEnv('', {}, { noDatabase: true })).dir
  const templates = join(dir, 'templates')
  mkdirSync(templates)
  writeFileSync(join(templates, 'sms.fr.txt'), 'Code {kode}\n')
  const env = await cliEnv(`[messages]\ntemplates_dir = "${templates}"\n`, {}, { noDatabase: true })
  const bad = env.run('messages', 'check')
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain(`${join(templates, 'sms.fr.txt')}: sms template 'fr': unknown placeholder {kode}: use {code}, {app} or {minutes}`)
  expect(bad.stderr).toContain('a template must contain the {code} placeholder')
  writeFileSync(join(templates, 'sms.fr.txt'), '{code} est votre code\n')
  const all = env.run('messages', 'check', '--all')
  expect(all.code).toBe(0)
  expect(all.stdout).toContain('sms fr (' + join(templates, 'sms.fr.txt') + '): GSM-7, 25 characters, 1 segment with a 10-digit code\n')
  expect(all.stdout).toContain('sms ru (built-in): UCS-2')
  expect(all.stdout).toContain('voice ja (built-in): ok\n')
})

test('config check agrees with messages check: a text over sms_max_segments fails it, beside every other problem', async () => {
  const long = `{code} ${'ó'.repeat(60)}`
  const texts = `[messages]\nsms_max_segments = 1\n[messages.templates]\nsms = { es = "${long}", fr = "{code} est votre code" }\n`
  const over = `config: sms template 'es' takes 2 SMS segments with a 10-digit code, over messages.sms_max_segments (1): see otpd messages check`
  const env = await cliEnv(texts, {}, { noDatabase: true })
  const alone = env.run('config', 'check')
  expect([alone.code, alone.stdout]).toEqual([1, ''])
  expect(alone.stderr).toBe(`${env.configFile}: 1 problem\n  - ${over}\n`)
  expect(env.run('messages', 'check').code).toBe(1)
  // With a provider whose secret is missing as well: both problems, in one run.
  const SMTP =
    '[providers.mail]\ntype = "smtp"\nhost = "smtp.example.com"\nfrom = "otp@example.com"\nusername = "otpd"\npassword_env = "NO_SUCH_SMTP_PASSWORD"\n[channels]\nemail = ["mail"]\n'
  const both = await cliEnv(texts + SMTP, {}, { noDatabase: true })
  const j = JSON.parse(both.run('config', 'check', '--json').stdout)
  expect(j.ok).toBe(false)
  expect(j.problems).toHaveLength(2)
  expect(j.problems[0]).toContain('NO_SUCH_SMTP_PASSWORD')
  expect(j.problems[1]).toBe(over)
  // Under the limit, config check passes.
  const fits = await cliEnv(texts.replace('sms_max_segments = 1', 'sms_max_segments = 2'), {}, { noDatabase: true })
  expect(fits.run('config', 'check').code).toBe(0)
})

test('messages check reports every template: a wrong one does not hide the size of the others or a second wrong one', async () => {
  const dir = (await cliEnv('', {}, { noDatabase: true })).dir
  const templates = join(dir, 'templates')
  mkdirSync(templates)
  writeFileSync(join(templates, 'sms.fr.txt'), 'Code {kode}\n')
  writeFileSync(join(templates, 'sms.de.txt'), 'Ihr Code\n')
  writeFileSync(join(templates, 'sms.es.txt'), `{code} ${'ó'.repeat(60)}\n`)
  writeFileSync(join(templates, 'sms.it.txt'), '{code} è il tuo codice\n')
  const env = await cliEnv(`[messages]\nsms_max_segments = 1\ntemplates_dir = "${templates}"\n`, {}, { noDatabase: true })
  const r = env.run('messages', 'check')
  expect(r.code).toBe(1)
  expect(r.stderr).toContain(`${join(templates, 'sms.fr.txt')}: sms template 'fr': unknown placeholder {kode}`)
  expect(r.stderr).toContain(`${join(templates, 'sms.de.txt')}: sms template 'de': `)
  expect(r.stdout).toContain(
    `sms es (${join(templates, 'sms.es.txt')}): UCS-2, 71 characters, 2 segments with a 10-digit code: over messages.sms_max_segments (1)\n`,
  )
  expect(r.stdout).toContain(`sms it (${join(templates, 'sms.it.txt')}): `)
  const j = JSON.parse(env.run('messages', 'check', '--json').stdout)
  expect(j.ok).toBe(false)
  // fr: its unknown placeholder and its missing {code}; de: its missing {code}.
  expect(j.problems).toHaveLength(3)
  expect(j.templates.map((t: { locale: string }) => t.locale).sort()).toEqual(['es', 'it'])
})

test('accounts set --locale / --otp-domain: checked, stored, shown; none removes them', async () => {
  const env = await cliEnv('[messages.templates]\nsms = { ca = "{code} és el teu codi" }\n')
  expect(env.json('accounts', 'set', 'default', '--locale', 'es-mx', '--otp-domain', 'login.example.com')).toEqual({
    name: 'default',
    locale: 'es',
    otp_domain: 'login.example.com',
  })
  expect(env.run('accounts', 'set', 'default', '--locale', 'ca').stdout).toBe("account 'default' gets texts in 'ca' unless a send names its locale\n")
  const unknown = env.run('accounts', 'set', 'default', '--locale', 'xx')
  expect(unknown.code).toBe(1)
  expect(unknown.stderr).toContain("--locale 'xx' is no language of the built-in texts or of a template")
  const host = env.run('accounts', 'set', 'default', '--otp-domain', 'https://example.com')
  expect(host.code).toBe(1)
  expect(host.stderr).toContain('--otp-domain must be a host name such as example.com')
  expect(env.json('accounts', 'set', 'default', '--locale', 'none', '--otp-domain', 'none')).toEqual({ name: 'default', locale: null, otp_domain: null })
})

test('SIGHUP reads the template files again: the next send has the new text; a wrong one is refused and the running text stays', async () => {
  const base = await cliEnv()
  const templates = join(base.dir, 'templates')
  mkdirSync(templates)
  const file = join(templates, 'sms.en.txt')
  writeFileSync(file, 'First {code}\n')
  const env = await cliEnv(`[messages]\ntemplates_dir = "${templates}"\n`)
  const key = env.json('keys', 'create', '--name', 'k').key
  env.run('credits', 'add', '10')
  const server = await startServer(env)
  let stderr = ''
  void (async () => {
    for await (const chunk of server.proc.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  let n = 0
  // A new number each time: the per-recipient limit stays out of the way.
  // Waits for one more line holding `want` than before the send (log lines are written in batches).
  const seen = (want: string) => server.output().split(want).length - 1
  const sendAndSee = async (want: string) => {
    const had = seen(want)
    const recipient = `+1415555010${n++}`
    expect((await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient, code: '5150' })).status).toBe(200)
    const deadline = Date.now() + 5000
    while (seen(want) <= had && Date.now() < deadline) await Bun.sleep(20)
    expect(seen(want)).toBe(had + 1)
  }
  await sendAndSee('"First 5150"')

  writeFileSync(file, 'Second {code}\n')
  server.proc.kill('SIGHUP')
  const deadline = Date.now() + 10_000
  while (!server.output().includes('configuration reloaded') && Date.now() < deadline) await Bun.sleep(20)
  await sendAndSee('"Second 5150"')

  writeFileSync(file, 'Third {kode}\n')
  server.proc.kill('SIGHUP')
  const until = Date.now() + 10_000
  while (!stderr.includes('reload refused') && Date.now() < until) await Bun.sleep(20)
  expect(stderr).toContain('unknown placeholder {kode}')
  await sendAndSee('"Second 5150"')
})
