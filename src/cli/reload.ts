/**
 * `otpd serve` on SIGHUP: reads the config again (and `--env-file`, which
 * systemd cannot refresh for a running service), checks it like a start, and
 * applies it without dropping a connection. A config that fails the check is
 * refused in one log line and the running one stays in force.
 */
import { changedSettings, changedVariables, ConfigError, type Server } from '../app/index.ts'
import type { LoadedConfig } from '../config/load.ts'
import { buildProviders, logOnlyChannels } from '../delivery/registry.ts'
import type { LevelLogger } from '../lib/logger.ts'

export function reloadOnSighup(server: Server, logger: LevelLogger, load: () => LoadedConfig, started: LoadedConfig): void {
  // What the last accepted load said, to name what the next one changes.
  let current = { config: started.config, env: started.env }
  process.on('SIGHUP', () => {
    let loaded: LoadedConfig
    try {
      loaded = load()
    } catch (err) {
      const why = err instanceof ConfigError ? `${err.source}: ${err.problems.join('; ')}` : err instanceof Error ? err.message : String(err)
      logger.error(`reload refused, the running configuration stays in force: ${why}`)
      return
    }
    const restart = server.reload(loaded.config, loaded.env)
    logger.setLevel(loaded.config.logging.level)
    // Names only, never values: a changed token or password is said to have changed, nothing more.
    const changed = changedSettings(current.config, loaded.config)
    const variables = changedVariables(loaded.config, current.env, loaded.env)
    current = { config: loaded.config, env: loaded.env }
    logger.info('configuration reloaded', { config: loaded.source, changed, ...(variables.length ? { variables } : {}) })
    for (const w of loaded.warnings) logger.warn(w)
    if (restart.length > 0) logger.warn(`${restart.join(', ')} changed in the config; the running values stay until otpd restarts`, { settings: restart })
    const logOnly = logOnlyChannels(buildProviders(loaded.config, { env: loaded.env }))
    if (logOnly.length > 0)
      logger.warn(`no delivery provider is configured for ${logOnly.join(', ')}: codes are only printed to this log, nothing is really delivered`)
  })
}
