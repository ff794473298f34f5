/**
 * What the operations endpoints read (http/ops-routes.ts). /readyz: the
 * database answers (the engine's check, which only reads: a flood of probes
 * once grew the WAL by hundreds of MB) and its last writes did not fail
 * (store/write-health.ts), it has every migration, and the delivery
 * configuration the process holds is valid. /metrics: the service's counters
 * (http/service-metrics.ts) and what the database holds and its files' sizes.
 */
import { VERSION } from '../lib/version.ts'
import type { Readiness } from '../http/ops-routes.ts'
import { createServiceMetrics, type ServiceMetrics } from '../http/service-metrics.ts'
import type { Clock } from '../lib/clock.ts'
import type { Engine } from '../store/engine.ts'
import type { WriteHealth } from '../store/write-health.ts'

/** How long /readyz answers from its last look: a flood of probes costs one look a second. */
export const READY_CACHE_MS = 1_000

export interface ReadinessSources {
  engine: Engine
  writeHealth: WriteHealth
  clock: Clock
  /** The delivery configuration's problems, joined; null when none. */
  delivery(): string | null
}

/** The readiness look, answered from the last one for READY_CACHE_MS (on the injected clock). */
export function cachedReadiness(s: ReadinessSources): () => Promise<Readiness> {
  const look = async (): Promise<Readiness> => ({
    database: (await problemOf(() => s.engine.check())) ?? s.writeHealth.problem(),
    migrations: await problemOf(async () => {
      if (!(await s.engine.migrationsCurrent())) throw new Error('the database lacks migrations this version needs')
    }),
    delivery: s.delivery(),
  })
  let lastLook: { at: number; result: Promise<Readiness> } | undefined
  return () => {
    const now = s.clock.now()
    if (lastLook === undefined || now - lastLook.at >= READY_CACHE_MS || now < lastLook.at) lastLook = { at: now, result: look() }
    return lastLook.result
  }
}

/** The service's metrics, with the credit balances, the event outbox and the database's files read when scraped. */
export function serviceMetricsOf(engine: Engine): ServiceMetrics {
  const { storage } = engine
  return createServiceMetrics({
    creditBalances: async () => (await storage.read((r) => r.admin.listAccounts())).map((a) => ({ account: a.name, balance: a.balance })),
    databaseFiles: () => engine.sizes(),
    version: VERSION,
    startedAt: Date.now(),
    outboxDepth: () => storage.read((r) => r.webhooks.outboxDepth()),
    failingEndpoints: () => storage.read((r) => r.webhooks.failingEndpoints()),
  })
}

async function problemOf(check: () => Promise<unknown>): Promise<string | null> {
  try {
    await check()
    return null
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
}
