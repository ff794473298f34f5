/** `otpd config check`: validate the configuration and say what it means (`config init` is in config-init.ts). */
import { Command } from 'commander'
import { resolve } from 'node:path'
import { ConfigError, missingVariables } from '../app/index.ts'
import { pgConnection } from '../config/database.ts'
import { buildProviders, logOnlyChannels } from '../delivery/registry.ts'
import { CHANNELS } from '../otp/types.ts'
import { example, load, printJson, withConfig, withJson, type CommonOptions } from './common.ts'
import { addConfigInit } from './config-init.ts'

export function configCommand(): Command {
  const config = new Command('config').description('write or check the configuration')
  addConfigInit(config)
  example(
    withJson(
      withConfig(config.command('check').description('validate the config file and environment, provider secrets included; exits 1 if anything is wrong')),
    ),
    'otpd config check --config /etc/otpd/otp.config.toml',
    'sudo cat /etc/otpd/otpd.env | sudo -u otpd otpd config check --env-file -',
  ).action((opts: CommonOptions) => {
    let loaded: ReturnType<typeof load>
    try {
      loaded = load(opts, { delivery: true })
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      const missing = missingVariables(err.problems)
      if (opts.json) printJson({ ok: false, source: err.source, problems: err.problems, missing_variables: missing, warnings: err.warnings })
      else {
        process.stderr.write(
          err.warnings.map((w) => `warning: ${w}\n`).join('') +
            `${err.source}: ${err.problems.length} problem${err.problems.length === 1 ? '' : 's'}\n${err.problems.map((p) => `  - ${p}\n`).join('')}`,
        )
        if (missing.length) {
          process.stderr.write(
            `missing from this environment: ${missing.join(', ')} (the service reads them from its EnvironmentFile; pass it with --env-file)\n`,
          )
        }
      }
      process.exit(1)
    }
    const c = loaded.config
    const providers = buildProviders(c, { env: loaded.env })
    const channels = Object.fromEntries(CHANNELS.map((ch) => [ch, providers[ch].map((p) => p.name)]))
    const logOnly = logOnlyChannels(providers)
    // Absolute: the file a relative path names depends on where it is read from (docs/configuration.md#paths).
    const database = c.database.url !== undefined ? pgConnection(c.database, loaded.env).display : absolutePath(c.database.path)
    // Each identity server's hook and the path it is served at (docs/integrations.md).
    const hooks = Object.entries(c.hooks).map(([name, h]) => ({ name, type: h.type, account: h.account, path: `/hooks/${name}` }))
    if (opts.json)
      return printJson({
        ok: true,
        source: loaded.source,
        listen: c.server.listen,
        database,
        channels,
        hooks,
        log_only: logOnly,
        warnings: loaded.warnings,
      })
    process.stdout.write(
      `configuration OK (${loaded.source})\n` +
        `  listen    ${c.server.listen}\n  database  ${database}\n` +
        CHANNELS.map((ch) => `  ${ch.padEnd(9)} ${channels[ch]!.join(' -> ')}\n`).join('') +
        hooks.map((h) => `  hook      ${h.path} (${h.type}, account ${h.account})\n`).join('') +
        (logOnly.length ? `warning: ${logOnly.join(', ')} only print codes to the server log; nothing is really delivered\n` : '') +
        loaded.warnings.map((w) => `warning: ${w}\n`).join(''),
    )
  })
  return config
}

function absolutePath(path: string): string {
  return path === ':memory:' ? path : resolve(path)
}
