/** `otpd config check`: validate the configuration and say what it means (`config init` is in config-init.ts). */
import { Command } from 'commander'
import { resolve } from 'node:path'
import { checkTexts, ConfigError, missingVariables } from '../app/index.ts'
import { pgConnection } from '../config/database.ts'
import type { Config } from '../config/schema.ts'
import { buildProviders, logOnlyChannels } from '../delivery/registry.ts'
import { overLimitProblem } from '../otp/messages/lint.ts'
import { CHANNELS } from '../otp/types.ts'
import { example, load, printJson, withConfig, withJson, type CommonOptions } from './common.ts'
import { addConfigInit } from './config-init.ts'

export function configCommand(): Command {
  const config = new Command('config').description('write or check the configuration')
  addConfigInit(config)
  example(
    withJson(
      withConfig(
        config
          .command('check')
          .description(
            'validate the config file, environment and texts (as otpd messages check), provider secrets included; reports every problem and exits 1 if any',
          ),
      ),
    ),
    'otpd config check --config /etc/otpd/otp.config.toml',
    'sudo cat /etc/otpd/otpd.env | sudo -u otpd otpd config check --env-file -',
  ).action(checkConfig)
  return config
}

/**
 * Every problem at once: the config's (providers and their secrets included)
 * and the texts' (a template over messages.sms_max_segments, which only
 * `messages check` reported before: docs/messages.md#checking-templates).
 */
function checkConfig(opts: CommonOptions): void {
  let loaded: ReturnType<typeof load>
  try {
    loaded = load(opts, { delivery: true })
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    // The texts are checked too when only the providers failed: the config without them still loads.
    let texts: string[] = []
    try {
      texts = textProblems(load(opts).config)
    } catch {}
    fail(opts, err.source, [...err.problems, ...texts], err.warnings)
  }
  const texts = textProblems(loaded.config)
  if (texts.length > 0) fail(opts, loaded.source, texts, loaded.warnings)
  const c = loaded.config
  const providers = buildProviders(c, { env: loaded.env })
  const channels = Object.fromEntries(CHANNELS.map((ch) => [ch, providers[ch].map((p) => p.name)]))
  const logOnly = logOnlyChannels(providers)
  // Absolute: the file a relative path names depends on where it is read from (docs/configuration.md#paths).
  const database = c.database.url !== undefined ? pgConnection(c.database, loaded.env).display : absolutePath(c.database.path)
  // Each identity server's hook and the path it is served at (docs/integrations.md).
  const hooks = Object.entries(c.hooks).map(([name, h]) => ({ name, type: h.type, account: h.account, path: `/hooks/${name}` }))
  if (opts.json) {
    printJson({
      ok: true,
      source: loaded.source,
      listen: c.server.listen,
      database,
      channels,
      hooks,
      log_only: logOnly,
      warnings: loaded.warnings,
    })
    return
  }
  process.stdout.write(
    `configuration OK (${loaded.source})\n` +
      `  listen    ${c.server.listen}\n  database  ${database}\n` +
      CHANNELS.map((ch) => `  ${ch.padEnd(9)} ${channels[ch]!.join(' -> ')}\n`).join('') +
      hooks.map((h) => `  hook      ${h.path} (${h.type}, account ${h.account})\n`).join('') +
      (logOnly.length ? `warning: ${logOnly.join(', ')} only print codes to the server log; nothing is really delivered\n` : '') +
      loaded.warnings.map((w) => `warning: ${w}\n`).join(''),
  )
}

/** What the texts' lint finds beyond what loading the config checks: the SMS texts over messages.sms_max_segments. */
function textProblems(config: Config): string[] {
  const { reports, settings } = checkTexts(config)
  return reports.filter((r) => r.over_limit).map((r) => overLimitProblem(r, settings.smsMaxSegments))
}

function fail(opts: CommonOptions, source: string, problems: string[], warnings: string[]): never {
  const missing = missingVariables(problems)
  if (opts.json) printJson({ ok: false, source, problems, missing_variables: missing, warnings })
  else {
    process.stderr.write(
      warnings.map((w) => `warning: ${w}\n`).join('') +
        `${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.map((p) => `  - ${p}\n`).join('')}`,
    )
    if (missing.length) {
      process.stderr.write(`missing from this environment: ${missing.join(', ')} (the service reads them from its EnvironmentFile; pass it with --env-file)\n`)
    }
  }
  process.exit(1)
}

function absolutePath(path: string): string {
  return path === ':memory:' ? path : resolve(path)
}
