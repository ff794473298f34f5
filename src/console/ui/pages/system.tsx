/** @jsxImportSource hono/jsx */
/** System: version, engine, database size, readiness, providers, and the effective configuration with secrets masked. */
import { type PageFrame, page } from '../layout.tsx'
import type { ProviderCircuit } from '../../system.ts'
import { Table } from '../widgets.tsx'

export interface SystemView {
  version: string
  engine: string
  database: string
  databaseBytes: number | null
  /** Each readiness check: ok or failed (the problem itself goes to the log, as for /readyz). */
  checks: Record<string, string>
  /** Each channel's providers (name and type), in failover order. */
  providers: Record<string, { name: string; type: string }[]>
  /** Each provider's circuit and slots on this node (docs/delivery.md#circuit-breaking). */
  circuits: ProviderCircuit[]
  /** The configuration with secrets masked, as JSON. */
  config: unknown
}

const CIRCUIT_TEXT: Record<ProviderCircuit['circuit'], string> = { closed: 'closed', open: 'open (skipped)', half_open: 'half-open (probing)' }

const size = (b: number | null) => (b === null ? 'unknown' : b < 1 << 20 ? `${(b / 1024).toFixed(1)} KiB` : `${(b / (1 << 20)).toFixed(1)} MiB`)

export function systemPage(frame: PageFrame, v: SystemView): string {
  const checks = Object.entries(v.checks)
  const providers = Object.entries(v.providers)
  return page(
    frame,
    <>
      <section class="panel" aria-labelledby="about-title">
        <h2 id="about-title">This server</h2>
        <dl class="facts">
          <dt>Version</dt>
          <dd data-fact="version">{v.version}</dd>
          <dt>Engine</dt>
          <dd data-fact="engine">{v.engine}</dd>
          <dt>Database</dt>
          <dd>{v.database}</dd>
          <dt>Database size</dt>
          <dd>{size(v.databaseBytes)}</dd>
        </dl>
      </section>
      <Table
        caption="Readiness"
        id="readiness"
        rows={checks}
        columns={[
          { label: 'Check', cell: ([c]) => c },
          { label: 'State', cell: ([, p]) => <span class={p === 'ok' ? 'status-ok' : 'status-bad'}>{p}</span> },
        ]}
      />
      <Table
        caption="Providers by channel, in failover order"
        id="providers"
        rows={providers}
        columns={[
          { label: 'Channel', cell: ([c]) => c },
          { label: 'Providers', cell: ([, list]) => (list.length === 0 ? 'none' : list.map((p) => `${p.name} (${p.type})`).join(' → ')) },
        ]}
      />
      <Table
        caption="Provider circuits on this node"
        id="circuits"
        rows={v.circuits}
        empty="No configured provider: deliveries go elsewhere."
        columns={[
          { label: 'Provider', cell: (c) => c.provider },
          { label: 'Circuit', cell: (c) => <span class={c.circuit === 'closed' ? 'status-ok' : 'status-bad'}>{CIRCUIT_TEXT[c.circuit]}</span> },
          { label: 'In flight', cell: (c) => `${c.in_flight} of ${c.max_in_flight}` },
          { label: 'Waiting for a slot', cell: (c) => String(c.waiting) },
        ]}
      />
      <section aria-labelledby="config-title">
        <h2 id="config-title">Effective configuration (secrets masked)</h2>
        <section class="panel table-wrap" tabindex={0} aria-label="Effective configuration">
          <pre>{JSON.stringify(v.config, null, 2)}</pre>
        </section>
      </section>
    </>,
  )
}
