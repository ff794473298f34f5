/** Webhooks: endpoints, recent events with their deliveries, and replay. */
import type { EndpointRow, EventRow } from '../../../otp/ports/index.ts'
import { type PageFrame, page } from '../layout.tsx'
import { ActionButton, Table, Time } from '../widgets.tsx'

export interface WebhooksView {
  endpoints: EndpointRow[]
  events: EventRow[]
}

const statusClass = (s: string) => (s === 'delivered' ? 'status-ok' : s === 'failed' ? 'status-bad' : 'status-warn')

export function webhooksPage(frame: PageFrame, v: WebhooksView): string {
  return page(
    frame,
    <>
      <section aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints</h2>
        <p class="hint">
          Added and removed with <code>otpd webhooks</code>; the secret is never shown here.
        </p>
        <Table
          caption="Webhook endpoints"
          id="endpoints"
          empty="No endpoint: events are kept, and sent once an endpoint is added."
          rows={v.endpoints}
          columns={[
            { label: 'Id', cell: (e) => String(e.id) },
            { label: 'Account', cell: (e) => e.account },
            { label: 'URL', cell: (e) => <code>{e.url}</code> },
            { label: 'Events', cell: (e) => (e.events === null ? 'all' : e.events.join(', ')) },
            { label: 'Created', cell: (e) => <Time at={e.createdAt} /> },
            { label: 'Secret rotated', cell: (e) => <Time at={e.rotatedAt} /> },
          ]}
        />
      </section>
      <section aria-labelledby="events-title">
        <h2 id="events-title">Recent events</h2>
        <Table
          caption="Events, newest first"
          id="events"
          rows={v.events}
          columns={[
            { label: 'When', cell: (e) => <Time at={e.occurredAt} /> },
            { label: 'Event', cell: (e) => <code>{e.id}</code> },
            { label: 'Type', cell: (e) => e.type },
            { label: 'Account', cell: (e) => e.account },
            { label: 'Verification', cell: (e) => (e.verificationId ? <a href={`/console/verifications/${e.verificationId}`}>{e.verificationId}</a> : '') },
            { label: 'Status', cell: (e) => <span class={statusClass(e.status)}>{e.status}</span> },
            { label: 'Endpoints', num: true, cell: (e) => String(e.endpoints) },
            { label: 'Attempts', num: true, cell: (e) => String(e.attempts) },
            { label: 'Last error', cell: (e) => e.lastError ?? '' },
            {
              label: 'Replay',
              cell: (e) => (
                <ActionButton action={`/console/events/${encodeURIComponent(e.id)}/replay`} csrf={frame.csrf} label="Replay" name={`event ${e.id}`} />
              ),
            },
          ]}
        />
      </section>
    </>,
  )
}
