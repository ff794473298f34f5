/** @jsxImportSource hono/jsx */
/**
 * Verifications: search by id, by a full number or address (hashed as otpd
 * stores it, never kept), by country, status and period; and one
 * verification's timeline. Recipients are shown masked only.
 */
import { type PageFrame, page, scopedHref } from '../layout.tsx'
import { Pager, ShortId, Table, Time } from '../widgets.tsx'

export const STATUSES = ['pending', 'approved', 'canceled', 'expired', 'failed'] as const

export interface VerificationSummary {
  id: string
  account: string
  channel: string
  /** Masked (+1415•••0123, j•••@example.com). */
  recipient: string
  country: string | null
  status: string
  createdAt: number
}

/** A send to the searched recipient that the fraud guard refused (no verification exists). */
export interface RefusalSummary {
  at: number
  account: string
  channel: string
  recipient: string
  rule: string
  country: string
}

export interface SearchForm {
  id: string
  recipient: string
  country: string
  status: string
}

export interface TimelineEntry {
  at: number
  /** sent, delivery update, attempt, lockout, approved, canceled... */
  kind: string
  detail: string
}

export interface VerificationDetail extends VerificationSummary {
  facts: { label: string; value: string }[]
  timeline: TimelineEntry[]
}

/** Where the list goes on: the next page's cursor (the search JSON's `next`), and whether this is a later page. */
export interface SearchPaging {
  next: string | null
  later: boolean
}

export function verificationsPage(
  frame: PageFrame,
  form: SearchForm,
  rows: VerificationSummary[],
  error?: string,
  paging?: SearchPaging,
  refusals?: RefusalSummary[],
): string {
  return page(
    frame,
    <>
      <form method="post" action="/console/verifications" hx-push-url="false" class="panel fields" aria-label="Search verifications">
        <input type="hidden" name="_csrf" value={frame.csrf} />
        {frame.scope?.account ? <input type="hidden" name="account" value={frame.scope.account} /> : null}
        <input type="hidden" name="period" value={frame.scope?.period ?? '24h'} />
        <div>
          <label for="q-id">Verification id</label>
          <input id="q-id" name="id" value={form.id} autocomplete="off" />
        </div>
        <div>
          <label for="q-recipient">Full number or address</label>
          <input id="q-recipient" name="recipient" value="" autocomplete="off" placeholder="+14155550123" aria-describedby="q-recipient-hint" />
          <p id="q-recipient-hint" class="hint visually-hidden">
            Hashed as otpd stores it; never shown, kept or put in a URL. Each search by recipient is in the audit log.
          </p>
        </div>
        <div>
          <label for="q-country">Country</label>
          <input id="q-country" name="country" value={form.country} maxlength={2} size={3} placeholder="US" autocomplete="off" />
        </div>
        <div>
          <label for="q-status">Status</label>
          <select id="q-status" name="status">
            <option value="" selected={form.status === ''}>
              any
            </option>
            {STATUSES.map((s) => (
              <option value={s} selected={form.status === s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      {error ? (
        <p class="flash error" role="alert">
          {error}
        </p>
      ) : null}
      <Table
        caption="Verifications, newest first"
        id="results"
        rows={rows}
        empty="No verification matches in this period."
        columns={[
          { label: 'Id', cell: (r) => <ShortId id={r.id} href={`/console/verifications/${encodeURIComponent(r.id)}`} /> },
          { label: 'Created', cell: (r) => <Time at={r.createdAt} /> },
          { label: 'Account', cell: (r) => r.account },
          { label: 'Channel', cell: (r) => r.channel },
          { label: 'Recipient', cell: (r) => <span class="mono">{r.recipient}</span> },
          { label: 'Country', cell: (r) => r.country ?? '' },
          { label: 'Status', cell: (r) => r.status },
        ]}
      />
      <Pager
        of="the verifications found"
        next={paging?.next ? scopedHref('/console/verifications', frame, { cursor: paging.next }) : null}
        first={paging?.later ? scopedHref('/console/verifications', frame, { cursor: undefined }) : null}
      />
      {refusals === undefined ? null : (
        <Table
          caption="Sends to this recipient the fraud guard refused, newest first"
          id="refusals"
          rows={refusals}
          empty="The fraud guard refused no send to this recipient in this period."
          columns={[
            { label: 'Refused', cell: (r) => <Time at={r.at} /> },
            { label: 'Account', cell: (r) => r.account },
            { label: 'Channel', cell: (r) => r.channel },
            { label: 'Recipient', cell: (r) => <span class="mono">{r.recipient}</span> },
            { label: 'Rule', cell: (r) => r.rule },
            { label: 'Country', cell: (r) => r.country },
          ]}
        />
      )}
    </>,
  )
}

export function verificationPage(frame: PageFrame, v: VerificationDetail): string {
  return page(
    frame,
    <>
      <p>
        <a href="/console/verifications">← Back to the search</a>
      </p>
      <section class="panel" aria-labelledby="facts-title">
        <h2 id="facts-title">
          Verification <code>{v.id}</code>
        </h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd data-fact="status">{v.status}</dd>
          <dt>Account</dt>
          <dd>{v.account}</dd>
          <dt>Channel</dt>
          <dd>{v.channel}</dd>
          <dt>Recipient</dt>
          <dd class="mono">{v.recipient}</dd>
          <dt>Country</dt>
          <dd>{v.country ?? 'unknown'}</dd>
          <dt>Created</dt>
          <dd>
            <Time at={v.createdAt} />
          </dd>
          {v.facts.map((f) => (
            <>
              <dt>{f.label}</dt>
              <dd>{f.value}</dd>
            </>
          ))}
        </dl>
      </section>
      <section class="panel" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <ol class="timeline" id="timeline">
          {v.timeline.map((e) => (
            <li data-kind={e.kind}>
              <Time at={e.at} /> <strong>{e.kind}</strong> {e.detail}
            </li>
          ))}
        </ol>
      </section>
    </>,
  )
}
