/**
 * `otpd serve` on SIGHUP: reads the config again (and `--env-file`, which
 * systemd cannot refresh for a running service), checks it like a start, and
 * applies it without dropping a connection. A config that fails the check is
 * refused in one log line and the running one stays in force.
 */
import { ConfigError } from '../app-config.ts'
import type { Server } from '../app.ts'
import type { LoadedConfig } from '../config/load.ts'
import { buildProviders, logOnlyChannels } from '../delivery/registry.ts'
import type { LevelLogger } from '../lib/logger.ts'

export function reloadOnSighup(server: Server, logger: LevelLogger, load: () => LoadedConfig): void {
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
    logger.info('configuration reloaded', { config: loaded.source })
    for (const w of loaded.warnings) logger.warn(w)
    if (restart.length > 0) logger.warn(`${restart.join(', ')} changed in the config; the running values stay until otpd restarts`, { settings: restart })
    const logOnly = logOnlyChannels(buildProviders(loaded.config, { env: loaded.env }))
    if (logOnly.length > 0)
      logger.warn(`no delivery provider is configured for ${logOnly.join(', ')}: codes are only printed to this log, nothing is really delivered`)
  })
}
