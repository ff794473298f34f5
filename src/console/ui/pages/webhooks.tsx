/** @jsxImportSource hono/jsx */
/** Webhooks: endpoints, the period's deliveries (one per event and endpoint) with status and attempts, and replay. */
import type { DeliveryRow, EndpointRow } from '../../../otp/ports/index.ts'
import { type PageFrame, page, scopedHref } from '../layout.tsx'
import { ActionButton, type ListPage, Pager, ShortId, Table, Time } from '../widgets.tsx'

export interface WebhooksView {
  endpoints: ListPage<EndpointRow, number>
  /** Which lists are past their first page. */
  later: { endpoints: boolean; deliveries: boolean }
  deliveries: (DeliveryRow & { account: string })[]
  /** The next page of deliveries: events before this one (null: the last page). */
  next: number | null
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
          rows={v.endpoints.rows}
          columns={[
            { label: 'Id', cell: (e) => String(e.id) },
            { label: 'Account', cell: (e) => e.account },
            { label: 'URL', cell: (e) => <code class="wrap">{e.url}</code> },
            { label: 'Events', cell: (e) => (e.events === null ? 'all' : e.events.join(', ')) },
            { label: 'Created', cell: (e) => <Time at={e.createdAt} /> },
            { label: 'Secret rotated', cell: (e) => <Time at={e.rotatedAt} /> },
          ]}
        />
        <Pager
          of="the endpoints"
          next={v.endpoints.next === null ? null : `${scopedHref('/console/webhooks', frame, { endpoints_after: String(v.endpoints.next) })}#endpoints-title`}
          first={v.later.endpoints ? `${scopedHref('/console/webhooks', frame)}#endpoints-title` : null}
        />
      </section>
      <section aria-labelledby="events-title">
        <h2 id="events-title">Deliveries</h2>
        <Table
          caption="Deliveries in this period, newest event first"
          id="events"
          rows={v.deliveries}
          columns={[
            { label: 'When', cell: (d) => <Time at={d.occurredAt} /> },
            { label: 'Event', cell: (d) => <ShortId id={d.eventId} /> },
            { label: 'Type', cell: (d) => d.type },
            { label: 'Account', cell: (d) => d.account },
            { label: 'Endpoint', num: true, cell: (d) => String(d.endpointId) },
            { label: 'Status', cell: (d) => <span class={statusClass(d.status)}>{d.status}</span> },
            { label: 'Attempts', num: true, cell: (d) => String(d.attempts) },
            { label: 'Next attempt', cell: (d) => (d.status === 'pending' ? <Time at={d.nextAt} /> : '') },
            { label: 'Last error', cell: (d) => <span class="wrap">{d.lastError ?? ''}</span> },
            {
              label: 'Replay',
              cell: (d) => (
                <ActionButton
                  action={`/console/events/${encodeURIComponent(d.eventId)}/replay`}
                  csrf={frame.csrf}
                  label="Replay"
                  name={`event ${d.eventId} to endpoint ${d.endpointId}`}
                />
              ),
            },
          ]}
        />
        <Pager
          of="the deliveries"
          next={v.next === null ? null : `${scopedHref('/console/webhooks', frame, { before: String(v.next) })}#events-title`}
          first={v.later.deliveries ? `${scopedHref('/console/webhooks', frame)}#events-title` : null}
        />
      </section>
    </>,
  )
}
