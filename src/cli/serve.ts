/** `otpd serve`: the HTTP API, the retention sweep, and a clean stop on SIGTERM/SIGINT. */
import { Command } from 'commander'
import { buildServer } from '../app.ts'
import { parseListen, resolveConfig } from '../config/load.ts'
import { LISTEN_OPTIONS } from '../http/app.ts'
import { createLogger } from '../lib/logger.ts'
import { sweptToBound } from '../store/sweep.ts'
import { example, load, withConfig, type CommonOptions } from './common.ts'

const SWEEP_EVERY_MS = 60_000
const STOP_GRACE_MS = 5_000
const SWEEP_STEP_ROWS = 2_000

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

      let stopping = false
      // In steps of SWEEP_STEP_ROWS per table, yielding to requests between steps.
      const runSweep = () => {
        const removed = { verifications: 0, keyHits: 0, recipientFailures: 0 }
        const step = () => {
          try {
            const r = server.sweep(SWEEP_STEP_ROWS)
            removed.verifications += r.verifications
            removed.keyHits += r.keyHits
            removed.recipientFailures += r.recipientFailures
            if (sweptToBound(r, SWEEP_STEP_ROWS) && !stopping) return void setImmediate(step)
            if (removed.verifications > 0) logger.info('retention sweep', { ...removed })
          } catch (err) {
            logger.error('retention sweep failed', { error: err instanceof Error ? err.message : String(err) })
          }
        }
        step()
      }
      runSweep()
      const timer = setInterval(runSweep, SWEEP_EVERY_MS)

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
