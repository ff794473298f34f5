/** `otpd config check` sentences for provider problems, and `otpd send-test` through real providers on local stubs. */
import { expect, setDefaultTimeout, test } from 'bun:test'
import PostalMime from 'postal-mime'
import { cliEnv, type CliEnv } from '../kit/cli.ts'
import { CA_FILE, parseRaw, startSmtpStub } from '../kit/smtp-stub.ts'
import { startVendorStub } from '../kit/vendor-stub.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

// These tests start `otpd` processes; bunfig.toml cannot raise bun's 5 s default per file.
setDefaultTimeout(30_000)

const SID = 'AC' + 'a'.repeat(32)
const TOKEN = 'twilio-token-never-printed'
let env: CliEnv

const twilio = (name: string, url: string) =>
  `[providers.${name}]\ntype = "twilio"\naccount_sid = "${SID}"\nauth_token_env = "TWILIO_AUTH_TOKEN"\nfrom = "+15005550006"\nbase_url = "${url}"\n`

test('config check names every provider problem as a sentence with its key, and exits 1', async () => {
  env = await cliEnv(
    [
      '[channels]',
      'sms = ["x", "twilio_main"]',
      'email = ["mail", "twilio_main"]',
      '[providers.mail]',
      'type = "smtp"',
      'host = "smtp.example.com"',
      'username = "otpd"',
      'password_env = "OTPD_SMTP_PASSWORD"',
      'from = "Acme <no-reply@example.com>"',
      'ca_file = "/nonexistent/ca.pem"',
      'colour = "blue"',
      twilio('twilio_main', 'https://api.twilio.com'),
    ].join('\n'),
  )
  const r = env.run('config', 'check')
  expect(r.code).toBe(1)
  const problems = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('  - '))
    .map((l) => l.slice(4))
  expect(problems).toEqual([
    'providers.mail.password_env names OTPD_SMTP_PASSWORD, which is not set',
    'providers.mail.ca_file names /nonexistent/ca.pem, which cannot be read (ENOENT)',
    "providers.mail.colour is not a setting of a 'smtp' provider",
    'providers.twilio_main.auth_token_env names TWILIO_AUTH_TOKEN, which is not set',
    "channels.sms names provider 'x', which is not defined",
    "channels.email names provider 'twilio_main', a 'twilio' provider, which cannot deliver email",
  ])
  const json = env.run('config', 'check', '--json')
  expect(json.code).toBe(1)
  expect(JSON.parse(json.stdout).problems).toEqual(problems)
})

test('config check accepts a complete delivery setup and shows the failover order', async () => {
  env = await cliEnv(
    `[channels]\nsms = ["twilio_main", "gateway"]\n${twilio('twilio_main', 'https://api.twilio.com')}[providers.gateway]\ntype = "webhook"\nurl = "https://gw.internal/otp"\nsecret_env = "OTPD_WEBHOOK_SECRET"\n`,
    { TWILIO_AUTH_TOKEN: TOKEN, OTPD_WEBHOOK_SECRET: 'hook-secret' },
  )
  const r = env.run('config', 'check')
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  expect(r.stdout).toContain('  sms       twilio_main -> gateway\n')
  expect(r.stdout).toContain('warning: email, voice, whatsapp only print codes to the server log')
  expect(r.stdout + r.stderr).not.toContain(TOKEN)
})

test('send-test fails over in order and reports which provider took it; no credit, no secret printed', async () => {
  const down = startVendorStub(() => Response.json({ code: 20500, message: 'down', status: 503 }, { status: 503 }))
  const up = startVendorStub(() => Response.json({ sid: 'SM1' }, { status: 201 }))
  closeAfterTest(down)
  closeAfterTest(up)
  env = await cliEnv(`[channels]\nsms = ["primary", "backup"]\n${twilio('primary', down.url)}${twilio('backup', up.url)}`, { TWILIO_AUTH_TOKEN: TOKEN })
  const r = await env.runAsync('send-test', '--channel', 'sms', '--to', '+14155550123')
  expect(r.code).toBe(0)
  expect(r.stdout).toMatch(
    /^ {2}primary failed: twilio Messages answered 503 \(error 20500\)\nsent a test sms to \+1415\*\*\*\*123 through backup \(twilio\) in \d+ ms\n$/,
  )
  expect(down.requests).toHaveLength(1)
  expect(up.requests).toHaveLength(1)
  expect(Object.fromEntries(new URLSearchParams(up.requests[0]!.body))).toEqual({
    To: '+14155550123',
    From: '+15005550006',
    Body: 'This is a test message from otpd. No action is needed.',
  })
  expect(r.stdout + r.stderr).not.toContain(TOKEN)
  const json = JSON.parse((await env.runAsync('send-test', '--channel', 'sms', '--to', '+14155550123', '--json')).stdout)
  expect(json).toMatchObject({ ok: true, channel: 'sms', to: '+1415****123', provider: 'backup', type: 'twilio', failures: [{ provider: 'primary' }] })
  const only = await env.runAsync('send-test', '--channel', 'sms', '--to', '+14155550123', '--provider', 'backup')
  expect(only.code).toBe(0)
  expect(down.requests).toHaveLength(2)
})

test('send-test exits 1 and lists every failure when no provider takes the message', async () => {
  const down = startVendorStub(() => new Response('no', { status: 500 }))
  closeAfterTest(down)
  env = await cliEnv(`[channels]\nvoice = ["primary"]\n${twilio('primary', down.url)}`, { TWILIO_AUTH_TOKEN: TOKEN })
  const r = await env.runAsync('send-test', '--channel', 'voice', '--to', '+14155550123')
  expect(r.code).toBe(1)
  expect(r.stderr).toBe('otpd: error: no voice provider took the test message to +1415****123\n  primary failed: twilio Calls answered 500\n')
  const bad = await env.runAsync('send-test', '--channel', 'voice', '--to', '+14155550123', '--provider', 'nope')
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain("provider 'nope' is not one of the voice providers (primary)")
  const wrong = await env.runAsync('send-test', '--channel', 'email', '--to', '+14155550123')
  expect(wrong.code).toBe(1)
  expect(wrong.stderr).toContain('recipient must be a valid email address for the email channel')
})

test('send-test by e-mail through a real SMTP server with STARTTLS and AUTH', async () => {
  const smtp = await startSmtpStub()
  closeAfterTest(smtp)
  env = await cliEnv(
    `[channels]\nemail = ["mail"]\n[providers.mail]\ntype = "smtp"\nhost = "localhost"\nport = ${smtp.port}\nsecurity = "starttls"\nusername = "otpd"\npassword_env = "OTPD_SMTP_PASSWORD"\nfrom = "Acme <no-reply@example.com>"\nca_file = "${CA_FILE}"\n`,
    { OTPD_SMTP_PASSWORD: 's3cret-smtp-password' },
  )
  const r = await env.runAsync('send-test', '--channel', 'email', '--to', 'ops@example.com')
  expect(r.stderr).toBe('')
  expect(r.stdout).toMatch(/^sent a test email to o\*s@example\.com through mail \(smtp\) in \d+ ms\n$/)
  expect(smtp.received).toHaveLength(1)
  expect(smtp.received[0]!.secure).toBe(true)
  const { headers } = parseRaw(smtp.received[0]!.raw)
  expect(Object.fromEntries(headers).Subject).toBe('otpd test message')
  // The plain part, as a MIME parser reads it (LF line ends, the break before the boundary kept).
  const parsed = await PostalMime.parse(smtp.received[0]!.raw)
  expect(parsed.text).toBe('This is a test message from otpd.\nDelivery by e-mail works. No action is needed.\n')
  expect(parsed.html).toContain('<p style="margin:0 0 16px;">This is a test message from otpd.<br>\nDelivery by e-mail works. No action is needed.</p>')
})

test('the commented provider and hook examples in otp.config.example.toml are valid when uncommented', async () => {
  const { resolveConfig } = await import('../../src/app/load-config.ts')
  const { parse } = await import('smol-toml')
  const { join } = await import('node:path')
  const text = await Bun.file(join(import.meta.dir, '..', '..', 'otp.config.example.toml')).text()
  const uncommented = text
    .split('\n')
    .map((l) =>
      /^# (\[providers\.|\[hooks\.|\[\[routing\]\]|\[routing\.|(countries|workflow|channel_timeout|account|type|host|port|security|username|password_env|from|ca_file|helo_name|account_sid|auth_token_env|base_url|api_key|api_secret_env|application_id|private_key_file|voice_from|voice_base_url|url|secret_env|sms|voice|email|whatsapp|phone_number_id|access_token_env|template|languages|app_secret_env|verify_token_env|api_version|whatsapp_from|whatsapp_content_sid|whatsapp_template|whatsapp_languages|messages_base_url|requests_per_minute|code_lifetime_seconds|channels|audience|subject|auth|token_header|token_attribute|message_attribute|receiver_attribute|uuid_attribute|header) )/.test(
        l,
      )
        ? l.slice(2)
        : l,
    )
    .join('\n')
    .replace('/etc/otpd/vonage.key', join(import.meta.dir, '..', 'kit', 'fixtures', 'tls', 'vonage-app.key'))
  const raw = parse(uncommented) as Record<string, any>
  expect(Object.keys(raw.providers)).toEqual(['mail', 'twilio_main', 'vonage_main', 'meta', 'gateway', 'dev_log'])
  expect(raw.channels).toEqual({ sms: ['twilio_main', 'gateway'], voice: ['twilio_main'], whatsapp: ['meta'], email: ['mail'] })
  // The [[routing]] example (docs/delivery.md#routing-by-country) is checked with them.
  expect(raw.routing).toEqual([
    {
      countries: ['IN'],
      workflow: ['whatsapp', 'sms'],
      channel_timeout: 45,
      from: { twilio_main: 'ACME' },
      channels: { sms: ['twilio_main'], email: ['mail'], voice: ['twilio_main'], whatsapp: ['meta'] },
    },
  ])
  // One hook of each type built in (docs/integrations.md).
  const { HOOK_ADAPTERS } = await import('../../src/hooks/registry.ts')
  expect(
    Object.values(raw.hooks)
      .map((h: any) => h.type)
      .sort(),
  ).toEqual(Object.keys(HOOK_ADAPTERS).sort())
  const env = {
    ...{ OTPD_SMTP_PASSWORD: 'p', TWILIO_AUTH_TOKEN: 't', VONAGE_API_SECRET: 's', OTPD_WEBHOOK_SECRET: 'w' },
    ...{ WHATSAPP_ACCESS_TOKEN: 'a', WHATSAPP_APP_SECRET: 'b', WHATSAPP_VERIFY_TOKEN: 'c' },
    ...{ SUPABASE_HOOK_SECRET: `v1,whsec_${Buffer.from('s'.repeat(32)).toString('base64')}`, ZITADEL_SIGNING_KEY: 'z', LOGTO_HOOK_AUTHORIZATION: 'Bearer l' },
    ...{ AUTH0_GATEWAY_SECRET: 'a0', AUTHENTIK_SMS_TOKEN: 'ak', KEYCLOAK_SMS_TOKEN: 'kc', KRATOS_COURIER_TOKEN: 'Bearer kr' },
  }
  raw.channels.voice = ['twilio_main', 'vonage_main']
  const problems = (() => {
    try {
      resolveConfig(raw, 'example', env)
      return []
    } catch (err) {
      return (err as { problems: string[] }).problems
    }
  })()
  expect(problems).toEqual([])
})

test('send-test --channel whatsapp: the template with the fixed test code; a misconfigured provider is printed with the setting to fix', async () => {
  const graphError = { error: { message: '(#132001) Template name does not exist in the translation', type: 'OAuthException', code: 132001, fbtrace_id: 'A' } }
  const wrong = startVendorStub(() => Response.json(graphError, { status: 404 }))
  const up = startVendorStub(() => Response.json({ messaging_product: 'whatsapp', messages: [{ id: 'wamid.TEST' }] }))
  closeAfterTest(wrong)
  closeAfterTest(up)
  const meta = (name: string, url: string) =>
    `[providers.${name}]\ntype = "whatsapp"\nphone_number_id = "106540352242922"\naccess_token_env = "WHATSAPP_ACCESS_TOKEN"\ntemplate = "otp_code"\nlanguages = ["en_US"]\nbase_url = "${url}"\n`
  env = await cliEnv(`[channels]\nwhatsapp = ["meta", "meta_backup"]\n${meta('meta', wrong.url)}${meta('meta_backup', up.url)}`, {
    WHATSAPP_ACCESS_TOKEN: TOKEN,
  })
  const r = await env.runAsync('send-test', '--channel', 'whatsapp', '--to', '+14155550123')
  expect(r.code).toBe(0)
  expect(r.stdout).toMatch(
    /^ {2}meta failed: whatsapp answered 404 \(error 132001: Template does not exist \(in this language\)\); check providers\.meta\.template and providers\.meta\.languages\nsent a test whatsapp to \+1415\*\*\*\*123 through meta_backup \(whatsapp\) in \d+ ms\n$/,
  )
  const body = JSON.parse(up.requests[0]!.body) as { template: { components: { parameters: { text: string }[] }[] } }
  expect(body.template.components.map((c) => c.parameters[0]!.text)).toEqual(['000000', '000000'])
  expect(r.stdout + r.stderr).not.toContain(TOKEN)
})
