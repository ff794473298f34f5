/** `otpd routing show +NUMBER`: what a send to that number would do, by the `[[routing]]` tables (docs/delivery.md#routing-by-country). */
import { Command } from 'commander'
import { buildProviders } from '../delivery/registry.ts'
import { routedConfig, routeFor } from '../delivery/routing.ts'
import { recipientProblem } from '../http/validate.ts'
import { destinationOf } from '../lib/phone-country.ts'
import { CHANNELS } from '../otp/types.ts'
import { example, load, printJson, withConfig, withJson, type CommonOptions } from './common.ts'

export function routingCommand(): Command {
  const routing = new Command('routing').description('what the [[routing]] tables do with a number')
  example(
    withJson(
      withConfig(routing.command('show').description("print a number's country, its table, what channel auto sends, and each channel's providers and senders")),
    ),
    'otpd routing show +919812345678',
  )
    .argument('<number>', 'an E.164 phone number')
    .action(show)
  return routing
}

function show(number: string, opts: CommonOptions): void {
  const wrong = recipientProblem('sms', number)
  if (wrong) throw new Error(wrong.replace('recipient', 'the number'))
  const { config, env } = load(opts, { delivery: true })
  const country = destinationOf(number).country
  const found = routeFor(config.routing, number)
  const used = found ? routedConfig(config, found.route) : config
  const providers = buildProviders(used, { env })
  // `auto`: the first table naming the country that has a workflow, else the `*` table's (otp/workflow.ts autoWorkflowOf).
  const auto =
    config.routing.find((r) => r.workflow !== undefined && r.countries.includes(country)) ??
    config.routing.find((r) => r.workflow !== undefined && r.countries.includes('*'))
  const channels = Object.fromEntries(CHANNELS.map((ch) => [ch, providers[ch].map((p) => ({ provider: p.name, from: fromOf(used.providers[p.name]) }))]))
  const table = found ? `routing[${found.index}]` : null
  if (opts.json) {
    printJson({ number, country, table, auto: auto?.workflow ?? null, channel_timeout: auto ? (auto.channel_timeout ?? 60) : null, channels })
    return
  }
  process.stdout.write(
    `${number}  country ${country}  ${table ?? 'no [[routing]] table: [channels]'}\n` +
      `  auto      ${auto?.workflow ? `${auto.workflow.join(' -> ')} (channel_timeout ${auto.channel_timeout ?? 60} s)` : '400: no workflow for this country'}\n` +
      CHANNELS.map((ch) => `  ${ch.padEnd(9)} ${channels[ch]!.map((p) => (p.from ? `${p.provider} (from ${p.from})` : p.provider)).join(' -> ')}\n`).join(''),
  )
}

function fromOf(table: Record<string, unknown> | undefined): string | null {
  return typeof table?.from === 'string' ? table.from : null
}
