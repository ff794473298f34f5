/** `otpd serve`: the HTTP API, the retention sweep, a reload on SIGHUP and a clean stop on SIGTERM/SIGINT. */
import { Command } from 'commander'
import { buildServer, resolveConfig, type Server } from '../app/index.ts'
import { parseListen, type LoadedConfig } from '../config/load.ts'
import { bindError } from '../config/listen.ts'
import type { Config } from '../config/schema.ts'
import { readTls } from '../config/tls.ts'
import { LISTEN_OPTIONS } from '../http/app.ts'
import { journalStreams } from '../lib/journal.ts'
import { createLogger, type Logger } from '../lib/logger.ts'
import { sweptToBound } from '../store/engine.ts'
import { example, load, withConfig, type CommonOptions } from './common.ts'
import { outboundCapProblem } from './outbound-cap.ts'
import { reloadOnSighup } from './reload.ts'

const SWEEP_EVERY_MS = 60_000
/** How often sends left unsettled by a stopped process are looked for (otp/recovery.ts), besides at start. */
const RECOVER_EVERY_MS = 5_000
/** How often due workflow steps are looked for (docs/api.md#workflows): a step starts at most this late after its `channel_timeout`. */
const WORKFLOW_EVERY_MS = 1_000
/**
 * On a stop signal, sends in flight finish (delivered, or refunded) before the
 * exit: the grace is the delivery budget and this much more for their last
 * transaction and answer.
 */
const STOP_MARGIN_MS = 5_000
/**
 * On a stop signal, requests that clients have already written may still sit
 * unread in socket buffers while the event loop catches up; closing the
 * listener closes idle keep-alive connections at once and resets them. This
 * long a drain lets them be read (and answered) first.
 */
const DRAIN_MS = 100
const SWEEP_STEP_ROWS = 2_000

export function serveCommand(): Command {
  return example(
    withConfig(new Command('serve').description('run the HTTP API')),
    'otpd serve',
    'otpd serve --listen 0.0.0.0:8080 --config /etc/otpd/otp.config.toml',
  )
    .option('--listen <host:port>', 'address to listen on (overrides server.listen)')
    .action(serve)
}

/** What the stop signal and the background work share: the timers it clears, and whether a stop has begun. */
interface Running {
  stopping: boolean
  timers: ReturnType<typeof setInterval>[]
}

async function serve(opts: CommonOptions & { listen?: string }): Promise<void> {
  // --listen wins over the file, at start and on every reload.
  const loadServe = (): LoadedConfig => {
    const l = load(opts, { delivery: true })
    if (!opts.listen) return l
    return { ...l, config: resolveConfig({ ...l.config, server: { ...l.config.server, listen: opts.listen } }, l.source, l.env) }
  }
  const loaded = loadServe()
  const config = loaded.config
  const logger = createLogger({
    level: config.logging.level,
    format: process.stdout.isTTY ? 'text' : 'json',
    journal: journalStreams(loaded.env.JOURNAL_STREAM),
  })
  // Before anything can fail: a warning (a mistyped OTPD_ variable) often explains a start error (the port it did not set).
  for (const w of loaded.warnings) logger.warn(w)
  if (outboundCapProblem !== null) {
    logger.warn("could not start again without Bun's limit of 256 outgoing requests at once; set BUN_CONFIG_MAX_HTTP_REQUESTS=65535", {
      error: outboundCapProblem,
    })
  }
  const server = await buildServer(config, { logger, env: loaded.env, background: true })
  // Signals are handled before the listener opens, so a SIGTERM during start-up is a clean stop too.
  const running: Running = { stopping: false, timers: [] }
  const stop = (signal: string) => stopServer(server, config, logger, running, signal)
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  reloadOnSighup(server, logger, loadServe, loaded)
  listen(server, loaded, logger)
  // Once listening (a failed start says only why it failed): the config is valid, but nothing is really delivered.
  if (server.logOnly.length > 0) {
    logger.warn(`no delivery provider is configured for ${server.logOnly.join(', ')}: codes are only printed to this log, nothing is really delivered`, {
      channels: server.logOnly,
    })
  }
  for (const w of server.engine.warnings) logger.warn(w)
  const runSweep = () => sweep(server, logger, running)
  runSweep()
  running.timers.push(setInterval(runSweep, SWEEP_EVERY_MS))
  const recover = recoverer(server, logger, running)
  void recover()
  running.timers.push(setInterval(() => void recover(), RECOVER_EVERY_MS))
  const advance = oneAtATime(
    running,
    () => server.advanceDue(),
    (err) => logger.error('starting due workflow steps failed; it runs again shortly', { error: err instanceof Error ? err.message : String(err) }),
  )
  running.timers.push(setInterval(() => void advance(), WORKFLOW_EVERY_MS))
  // Webhook deliveries and expiry events (events/dispatcher.ts); shutdown() stops it.
  server.events.start()
}

/** The grace comes from the config the server started with. */
async function stopServer(server: Server, config: Config, logger: Logger, running: Running, signal: string): Promise<void> {
  if (running.stopping) return
  running.stopping = true
  logger.info('stopping', { signal })
  for (const t of running.timers) clearInterval(t)
  await Bun.sleep(DRAIN_MS)
  // Stop accepting and let in-flight requests finish; a client that never
  // finishes (an unread upload, a stalled keep-alive) is cut after the grace period.
  // Bun's own server handles: Elysia's stop() throws (and logs a stack) when called twice.
  const listeners = [server.http.server, server.adminHttp.server].filter((l) => l != null)
  await Promise.race([Promise.all(listeners.map((l) => l.stop())), Bun.sleep(config.delivery.timeout_ms + STOP_MARGIN_MS)])
  await Promise.all(listeners.map((l) => l.stop(true)))
  await server.shutdown()
  logger.info('stopped', { signal })
  process.exit(0)
}

/**
 * Opens the API's listener, and the admin one when configured, then says
 * where: "listening" is said only once every listener is bound, so a start
 * that fails on the admin address never announces the API (docs/operating.md#logs).
 */
function listen(server: Server, loaded: LoadedConfig, logger: Logger): void {
  const { config } = loaded
  const { hostname, port } = parseListen(config.server.listen)
  const tls = readTls(config.server.tls)
  try {
    server.http.listen({ hostname, port, ...LISTEN_OPTIONS, ...(tls ? { tls } : {}) })
  } catch (err) {
    throw bindError('server.listen', config.server.listen, err)
  }
  const admin = config.server.admin_listen === undefined ? undefined : parseListen(config.server.admin_listen)
  if (admin !== undefined) {
    try {
      server.adminHttp.listen({ hostname: admin.hostname, port: admin.port, ...LISTEN_OPTIONS })
    } catch (err) {
      // The API's port is given back at once: the process exits with this error.
      server.http.server?.stop(true)
      throw bindError('server.admin_listen', config.server.admin_listen!, err)
    }
  }
  logger.info(`otpd listening on ${url(tls ? 'https' : 'http', hostname, server.http.server!.port)}`, {
    config: loaded.source,
    database: server.engine.display,
  })
  if (admin === undefined) return
  const adminUrl = url('http', admin.hostname, server.adminHttp.server!.port)
  logger.info(`otpd admin listening on ${adminUrl} (/metrics, /healthz, /readyz${server.consoleOn ? ', /console/' : ''})`)
  if (server.consoleOn)
    logger.info(`otpd console at ${adminUrl}/console/ (sign in as an operator: otpd operators add NAME)`, { console: `${adminUrl}/console/` })
}

/** One retention sweep, in steps of SWEEP_STEP_ROWS per table, yielding to requests between steps. */
function sweep(server: Server, logger: Logger, running: Running): void {
  const removed = { verifications: 0, keyHits: 0, recipientFailures: 0, idempotencyKeys: 0 }
  const step = async () => {
    try {
      const r = await server.sweep(SWEEP_STEP_ROWS)
      removed.verifications += r.verifications
      removed.keyHits += r.keyHits
      removed.recipientFailures += r.recipientFailures
      removed.idempotencyKeys += r.idempotencyKeys
      if (sweptToBound(r, SWEEP_STEP_ROWS) && !running.stopping) return void setImmediate(() => void step())
      if (removed.verifications > 0 || removed.idempotencyKeys > 0) logger.info('retention sweep', { ...removed })
    } catch (err) {
      logger.error('retention sweep failed', { error: err instanceof Error ? err.message : String(err) })
    }
  }
  void step()
}

/** The recovery of sends left unsettled, one run at a time, none once stopping. */
function recoverer(server: Server, logger: Logger, running: Running): () => Promise<void> {
  let recovering = false
  return async () => {
    if (recovering || running.stopping) return
    recovering = true
    try {
      await server.recover()
    } catch (err) {
      logger.error('recovery of unsettled sends failed; it runs again shortly', { error: err instanceof Error ? err.message : String(err) })
    } finally {
      recovering = false
    }
  }
}

/** `work`, one run at a time, none once stopping; a failure is reported and the next tick tries again. */
function oneAtATime(running: Running, work: () => Promise<unknown>, report: (err: unknown) => void): () => Promise<void> {
  let busy = false
  return async () => {
    if (busy || running.stopping) return
    busy = true
    try {
      await work()
    } catch (err) {
      report(err)
    } finally {
      busy = false
    }
  }
}

function url(scheme: string, hostname: string, port: number | undefined): string {
  return `${scheme}://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`
}
