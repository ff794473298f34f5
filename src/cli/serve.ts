/** `otpd serve`: the HTTP API, the retention sweep, and a clean stop on SIGTERM/SIGINT. */
import { Command } from 'commander'
import { buildServer } from '../app.ts'
import { parseListen, resolveConfig } from '../config/load.ts'
import { readTls } from '../config/tls.ts'
import { LISTEN_OPTIONS } from '../http/app.ts'
import { createLogger } from '../lib/logger.ts'
import { example, load, withConfig, type CommonOptions } from './common.ts'

const SWEEP_EVERY_MS = 60_000
const STOP_GRACE_MS = 5_000
/**
 * On a stop signal, requests that clients have already written may still sit
 * unread in socket buffers while the event loop catches up; closing the
 * listener closes idle keep-alive connections at once and resets them. This
 * long a drain lets them be read (and answered) first.
 */
const DRAIN_MS = 100

export function serveCommand(): Command {
  return example(withConfig(new Command('serve').description('run the HTTP API')), 'otpd serve', 'otpd serve --listen 0.0.0.0:8080 --config /etc/otpd/otp.config.toml')
    .option('--listen <host:port>', 'address to listen on (overrides server.listen)')
    .action(async (opts: CommonOptions & { listen?: string }) => {
      const loaded = load(opts)
      const config = opts.listen ? resolveConfig({ ...loaded.config, server: { ...loaded.config.server, listen: opts.listen } }, loaded.source, loaded.env) : loaded.config
      const logger = createLogger({ level: config.logging.level, format: process.stdout.isTTY ? 'text' : 'json' })
      const server = buildServer(config, { logger, env: loaded.env })
      const { hostname, port } = parseListen(config.server.listen)
      const tls = readTls(config.server.tls)
      server.http.listen({ hostname, port, ...LISTEN_OPTIONS, ...(tls ? { tls } : {}) })
      logger.info(`otpd listening on ${url(tls ? 'https' : 'http', hostname, server.http.server!.port)}`, {
        config: loaded.source,
        database: config.database.path,
      })
      if (config.server.admin_listen !== undefined) {
        const admin = parseListen(config.server.admin_listen)
        server.adminHttp.listen({ hostname: admin.hostname, port: admin.port, ...LISTEN_OPTIONS })
        logger.info(`otpd admin listening on ${url('http', admin.hostname, server.adminHttp.server!.port)} (/metrics, /healthz, /readyz)`)
      }
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
        await Bun.sleep(DRAIN_MS)
        // Stop accepting and let in-flight requests finish; a client that never
        // finishes (an unread upload, a stalled keep-alive) is cut after the grace period.
        await Promise.race([Promise.all([server.http.stop(), server.adminHttp.server && server.adminHttp.stop()]), Bun.sleep(STOP_GRACE_MS)])
        await server.http.stop(true)
        if (server.adminHttp.server) await server.adminHttp.stop(true)
        server.close()
        process.exit(0)
      }
      process.on('SIGTERM', () => void stop('SIGTERM'))
      process.on('SIGINT', () => void stop('SIGINT'))
    })
}

function url(scheme: string, hostname: string, port: number | undefined): string {
  return `${scheme}://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`
}
