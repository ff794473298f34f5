/**
 * `otpd send-test --channel C --to R`: delivers a test message through the
 * configured providers of a channel, in their failover order, and says which
 * provider took it. No credit, no verification, no database.
 */
import { Command, Option } from 'commander'
import { buildProviders } from '../delivery/registry.ts'
import { guardSettingsOf } from '../delivery/guard-settings.ts'
import { ProviderGuards } from '../delivery/provider-guards.ts'
import { ChannelRouter, DeliveryFailedError, type DeliveryAttempt } from '../delivery/router.ts'
import { recipientProblem } from '../http/validate.ts'
import { createLogger } from '../lib/logger.ts'
import { maskRecipient } from '../lib/mask.ts'
import { randomUuid } from '../lib/random.ts'
import { CHANNELS, type Channel } from '../otp/types.ts'
import { example, load, printJson, withConfig, withJson, type CommonOptions } from './common.ts'

const TEXT: Record<Channel, string> = {
  sms: 'This is a test message from otpd. No action is needed.',
  email: 'This is a test message from otpd.\nDelivery by e-mail works. No action is needed.',
  voice: 'This is a test call from otpd. No action is needed.',
  whatsapp: 'This is a test message from otpd. No action is needed.',
}

/** WhatsApp can only carry the authentication template, which needs a code: a test sends this one (docs/delivery.md#whatsapp). */
const WHATSAPP_TEST_CODE = '000000'

interface Options extends CommonOptions {
  channel: Channel
  to: string
  provider?: string
}

export function sendTestCommand(): Command {
  return example(
    withJson(withConfig(new Command('send-test').description('deliver a test message through the configured providers (no credit, no verification)'))),
    'otpd send-test --channel sms --to +14155550123',
    'otpd send-test --channel email --to ops@example.com --provider mail',
  )
    .addOption(new Option('--channel <channel>', 'sms, email, voice or whatsapp').choices(CHANNELS).makeOptionMandatory())
    .requiredOption('--to <recipient>', 'E.164 phone number, or e-mail address for the email channel')
    .option('--provider <name>', 'try only this provider of the channel')
    .action(sendTest)
}

async function sendTest(opts: Options): Promise<void> {
  const wrong = recipientProblem(opts.channel, opts.to)
  if (wrong) throw new Error(wrong)
  const loaded = load(opts, { delivery: true })
  const all = buildProviders(loaded.config, { env: loaded.env })
  const providers = chosenProviders(all, opts)
  const failures: { provider: string; reason: string }[] = []
  const attempts: DeliveryAttempt[] = []
  const logger = createLogger({
    level: 'warn',
    format: 'json',
    repeatWindowMs: 0, // every failure is one to report
    write: (line) => {
      const f = JSON.parse(line) as { provider?: string; reason?: string }
      if (f.provider && f.reason) failures.push({ provider: f.provider, reason: f.reason })
    },
  })
  // Each provider's own timeout_ms, as `serve` gives it (docs/delivery.md#slow-providers); a fresh circuit, as this process is.
  const guards = new ProviderGuards(guardSettingsOf(loaded.config), Date.now, logger)
  const router = new ChannelRouter({ ...all, [opts.channel]: providers }, loaded.config.delivery.timeout_ms, logger, (a) => attempts.push(a), guards)
  const now = Date.now()
  const to = maskRecipient(opts.to)
  try {
    const { provider } = await router.deliver({
      channel: opts.channel,
      recipient: opts.to,
      text: TEXT[opts.channel],
      subject: 'otpd test message',
      // A test message carries no code: voice says the words, e-mail has no code block.
      locale: 'en',
      code: opts.channel === 'whatsapp' ? WHATSAPP_TEST_CODE : '',
      verificationId: randomUuid(),
      expiresAt: now + 300_000,
    })
    const ms = Math.round(attempts.at(-1)?.ms ?? 0)
    const type = providers.find((p) => p.name === provider)?.type
    if (opts.json) return printJson({ ok: true, channel: opts.channel, to, provider, type, ms, failures })
    for (const f of failures) process.stdout.write(`  ${f.provider} failed: ${f.reason}\n`)
    process.stdout.write(`sent a test ${opts.channel} to ${to} through ${provider} (${type}) in ${ms} ms\n`)
    if (type === 'log' || type === 'noop') process.stdout.write(`note: '${provider}' is a ${type} provider; nothing really left this machine\n`)
  } catch (err) {
    if (!(err instanceof DeliveryFailedError)) throw err
    if (opts.json) printJson({ ok: false, channel: opts.channel, to, provider: null, failures })
    else {
      process.stderr.write(`otpd: error: no ${opts.channel} provider took the test message to ${to}\n`)
      for (const f of failures) process.stderr.write(`  ${f.provider} failed: ${f.reason}\n`)
      if (failures.length === 0) process.stderr.write(`  ${err.message}\n`)
    }
    process.exit(1)
  }
}

/** The channel's providers in their failover order, or only `--provider`. */
function chosenProviders(all: ReturnType<typeof buildProviders>, opts: Options) {
  const providers = all[opts.channel]
  if (!opts.provider) return providers
  const chosen = providers.filter((p) => p.name === opts.provider)
  if (chosen.length === 0) {
    throw new Error(`provider '${opts.provider}' is not one of the ${opts.channel} providers (${all[opts.channel].map((p) => p.name).join(', ')})`)
  }
  return chosen
}
