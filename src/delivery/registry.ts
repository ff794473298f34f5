/**
 * Turns `[channels]` and `[providers.*]` into providers per channel, and checks
 * them, reporting each problem as a sentence naming its key. A channel with
 * nothing configured uses the `log` provider.
 */
import type { Config } from '../config/schema.ts'
import type { Logger } from '../lib/logger.ts'
import { CHANNELS, type Channel } from '../otp/types.ts'
import { readGuardKeys } from './guard-settings.ts'
import { emailLookOf, type EmailLook } from './email-html.ts'
import { LogProvider } from './log-provider.ts'
import { NoopProvider } from './noop-provider.ts'
import { ProviderOptions, type Env } from './options.ts'
import type { Provider } from './provider.ts'
import { receiptUrl, type ReceiptReader } from './receipts.ts'
import { readSmtp, SmtpProvider } from './smtp-provider.ts'
import { readTwilio, twilioReceiptReader, TwilioProvider, type TwilioSettings } from './twilio-provider.ts'
import { readVonage, vonageReceiptReader, VonageProvider, type VonageSettings } from './vonage-provider.ts'
import { readWebhook, webhookReceiptReader, WebhookProvider, type WebhookSettings } from './webhook-provider.ts'
import { readWhatsapp, WhatsappProvider, type WhatsappSettings } from './whatsapp-provider.ts'
import { whatsappReceiptReader } from './whatsapp-receipts.ts'

/** What providers may need from outside their own table. */
export interface ProviderContext {
  env: Env
  /** Where `log` providers write their lines (the server's log); a JSON logger on stdout when absent. */
  logger?: Logger
  /** Milliseconds since the epoch (e-mail Date, webhook signature time, Vonage JWT); Date.now when absent. */
  now?: () => number
  /** `server.public_url`: when set, providers that can ask their vendor for delivery receipts do (delivery/receipts.ts). */
  publicUrl?: string
  /** `[messages.email]` read once by buildProviders, for the e-mail providers. */
  emailLook?: EmailLook
}

interface ProviderType<S> {
  /** The channels this type can deliver. */
  channels: readonly Channel[]
  /** Reads the table, recording problems in `o`; `used` lists the channels that name this provider; `receipts`: server.public_url is set. */
  read(o: ProviderOptions, used: Channel[], receipts: boolean): S
  /** `receipts`: the provider's receipt URL when receipts are on. */
  create(name: string, settings: S, ctx: ProviderContext, now: () => number, receipts: string | undefined): Provider
  /** Checks and reads this type's delivery receipts; absent for types without any. */
  receipts?(settings: S, now: () => number): ReceiptReader
}

const type = <S>(t: ProviderType<S>): ProviderType<unknown> => t as ProviderType<unknown>

const TYPES: Record<string, ProviderType<unknown>> = {
  smtp: type({ channels: ['email'], read: readSmtp, create: (name, s, ctx, now) => new SmtpProvider(name, s, now, ctx.emailLook) }),
  twilio: type<TwilioSettings>({
    channels: ['sms', 'voice', 'whatsapp'],
    read: readTwilio,
    create: (name, s, _ctx, _now, receipts) => new TwilioProvider(name, s, receipts),
    receipts: (s) => twilioReceiptReader(s),
  }),
  vonage: type<VonageSettings>({
    channels: ['sms', 'voice', 'whatsapp'],
    read: readVonage,
    create: (name, s, _ctx, now, receipts) => new VonageProvider(name, s, now, receipts),
    receipts: (s) => vonageReceiptReader(s),
  }),
  whatsapp: type<WhatsappSettings>({
    channels: ['whatsapp'],
    read: readWhatsapp,
    create: (name, s) => new WhatsappProvider(name, s),
    receipts: (s) => whatsappReceiptReader(s),
  }),
  webhook: type<WebhookSettings>({
    channels: CHANNELS,
    read: readWebhook,
    create: (name, s, _ctx, now, receipts) => new WebhookProvider(name, s, now, receipts),
    receipts: (s, now) => webhookReceiptReader(s, now),
  }),
  log: type({ channels: CHANNELS, read: () => undefined, create: (name, _s, ctx) => new LogProvider(name, ctx.logger) }),
  noop: type({ channels: CHANNELS, read: () => undefined, create: (name) => new NoopProvider(name) }),
}

export const PROVIDER_TYPES = Object.keys(TYPES)

/**
 * The provider type a config names, or undefined: its own keys only, so a
 * name of Object.prototype (`constructor`, `toString`, `__proto__`) is no
 * type and gets the ordinary "not one of" error.
 */
function typeNamed(name: unknown): ProviderType<unknown> | undefined {
  const key = String(name)
  return Object.hasOwn(TYPES, key) ? TYPES[key] : undefined
}

function usedBy(config: Config, name: string): Channel[] {
  return CHANNELS.filter((c) => config.channels[c]?.includes(name))
}

/**
 * Every problem of the provider tables and channel lists, in one run: a
 * section that failed the schema elsewhere (a channel list holding a number,
 * a provider that is not a table) still has its other entries checked, so an
 * operator never fixes problems in rounds. Entries the schema refused are
 * skipped here (it named them already).
 */
export function checkProviders(config: Config, env: Env): string[] {
  const problems: string[] = []
  const providers: Record<string, unknown> = isTable(config.providers) ? config.providers : {}
  const channels: Record<string, unknown> = isTable(config.channels) ? config.channels : {}
  const namesOf = (channel: Channel): unknown[] => (Array.isArray(channels[channel]) ? (channels[channel] as unknown[]) : [])
  for (const [name, opts] of Object.entries(providers)) {
    if (!isTable(opts)) continue
    const t = typeNamed(opts.type)
    if (!t) {
      problems.push(
        opts.type === undefined
          ? `providers.${name}.type is missing (one of: ${PROVIDER_TYPES.join(', ')})`
          : `providers.${name}.type '${String(opts.type)}' is not one of: ${PROVIDER_TYPES.join(', ')}`,
      )
      continue
    }
    const o = new ProviderOptions(name, opts, env)
    const used = CHANNELS.filter((c) => namesOf(c).includes(name))
    t.read(o, used, config.server?.public_url !== undefined)
    readGuardKeys(o, config.delivery)
    o.unknownKeys(String(opts.type))
    problems.push(...o.problems)
  }
  for (const channel of CHANNELS) {
    const names = namesOf(channel)
    for (const [i, name] of names.entries()) {
      if (typeof name !== 'string' || name === '') continue
      if (names.indexOf(name) !== i) {
        problems.push(`channels.${channel} names provider '${name}' twice`)
        continue
      }
      if (!Object.hasOwn(providers, name)) {
        problems.push(`channels.${channel} names provider '${name}', which is not defined`)
        continue
      }
      const entry = providers[name]
      if (!isTable(entry)) continue
      const typeName = String(entry.type)
      const t = typeNamed(typeName)
      if (t && !t.channels.includes(channel))
        problems.push(`channels.${channel} names provider '${name}', a '${typeName}' provider, which cannot deliver ${channel}`)
    }
  }
  return problems
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Providers per channel, in failover order. Assumes checkProviders found nothing. */
export function buildProviders(config: Config, given: ProviderContext): Record<Channel, Provider[]> {
  const ctx: ProviderContext = { ...given, emailLook: given.emailLook ?? emailLookOf(config.messages.email) }
  const now = ctx.now ?? Date.now
  const built = new Map<string, Provider>()
  const get = (name: string): Provider => {
    let p = built.get(name)
    if (!p) {
      const opts = config.providers[name]!
      const t = typeNamed(opts.type)!
      const o = new ProviderOptions(name, opts, ctx.env)
      const receipts = ctx.publicUrl !== undefined && t.receipts ? receiptUrl(ctx.publicUrl, name) : undefined
      p = t.create(name, t.read(o, usedBy(config, name), ctx.publicUrl !== undefined), ctx, now, receipts)
      built.set(name, p)
    }
    return p
  }
  const fallback = new LogProvider('log', ctx.logger)
  const out = {} as Record<Channel, Provider[]>
  for (const channel of CHANNELS) {
    const names = config.channels[channel]
    out[channel] = names ? names.map(get) : [fallback]
  }
  return out
}

/**
 * The receipt readers of the configured providers whose type has receipts,
 * by provider name. Assumes checkProviders found nothing.
 */
export function buildReceiptReaders(config: Config, ctx: ProviderContext): Map<string, ReceiptReader> {
  const now = ctx.now ?? Date.now
  const out = new Map<string, ReceiptReader>()
  for (const [name, opts] of Object.entries(config.providers)) {
    const t = typeNamed(opts.type)
    if (!t?.receipts) continue
    out.set(name, t.receipts(t.read(new ProviderOptions(name, opts, ctx.env), usedBy(config, name), ctx.publicUrl !== undefined), now))
  }
  return out
}

/** Channels whose messages reach no one (only the log, or nowhere): `serve` warns about these at start. */
export function logOnlyChannels(providers: Record<Channel, Provider[]>): Channel[] {
  return CHANNELS.filter((c) => providers[c].every((p) => p.type === 'log' || p.type === 'noop'))
}
