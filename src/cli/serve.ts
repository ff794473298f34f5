/** `otpd serve`: the HTTP API, the retention sweep, and a clean stop on SIGTERM/SIGINT. */
import { Command } from 'commander'
import { buildServer } from '../app.ts'
import { parseListen, resolveConfig } from '../config/load.ts'
import { LISTEN_OPTIONS } from '../http/app.ts'
import { createLogger } from '../lib/logger.ts'
import { example, load, withConfig, type CommonOptions } from './common.ts'

const SWEEP_EVERY_MS = 60_000
const STOP_GRACE_MS = 5_000

export function serveCommand(): Command {
  return example(withConfig(new Command('serve').description('run the HTTP API')), 'otpd serve', 'otpd serve --listen 0.0.0.0:8080 --config /etc/otpd/otp.config.toml')
    .option('--listen <host:port>', 'address to listen on (overrides server.listen)')
    .action(async (opts: CommonOptions & { listen?: string }) => {
      const loaded = load(opts)
      const config = opts.listen ? resolveConfig({ ...loaded.config, server: { ...loaded.config.server, listen: opts.listen } }, loaded.source, loaded.env) : loaded.config
      const logger = createLogger({ level: config.logging.level, format: process.stdout.isTTY ? 'text' : 'json' })
      const server = buildServer(config, { logger, env: loaded.env, backgroundCheckpoints: true })
      const { hostname, port } = parseListen(config.server.listen)
      server.http.listen({ hostname, port, ...LISTEN_OPTIONS })
      logger.info(`otpd listening on http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${server.http.server!.port}`, {
        config: loaded.source,
        database: config.database.path,
      })
      if (server.logOnly.length > 0) {
        logger.warn(`no delivery provider is configured for ${server.logOnly.join(', ')}: codes are only printed to this log, nothing is really delivered`, {
          channels: server.logOnly,
        })
      }

      const runSweep = () => {
        try {
          const removed = server.sweep()
          if (removed.verifications > 0) logger.info('retention sweep', { ...removed })
        } catch (err) {
          logger.error('retention sweep failed', { error: err instanceof Error ? err.message : String(err) })
        }
      }
      runSweep()
      const timer = setInterval(runSweep, SWEEP_EVERY_MS)

      let stopping = false
      const stop = async (signal: string) => {
        if (stopping) return
        stopping = true
        logger.info('stopping', { signal })
        clearInterval(timer)
        // Stop accepting and let in-flight requests finish; a client that never
        // finishes (an unread upload, a stalled keep-alive) is cut after the grace period.
        await Promise.race([server.http.stop(), Bun.sleep(STOP_GRACE_MS)])
        await server.http.stop(true)
        server.close()
        process.exit(0)
      }
      process.on('SIGTERM', () => void stop('SIGTERM'))
      process.on('SIGINT', () => void stop('SIGINT'))
    })
}
