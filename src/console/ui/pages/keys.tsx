/** @jsxImportSource hono/jsx */
/** Keys and accounts: create a key (shown once), disable, enable, revoke; balances and the ledger; credits; account settings. */
import type { Child } from 'hono/jsx'
import type { AccountFraudView } from '../../../otp/fraud-admin.ts'
import type { AccountRow, KeyRow, LedgerRow } from '../../../otp/ports/index.ts'
import { type PageFrame, page, scopedHref } from '../layout.tsx'
import { ActionButton, Csrf, fmt, type ListPage, Pager, ShortId, Table, Time } from '../widgets.tsx'

export interface KeysView {
  /** Every account (the forms' choices). */
  accounts: AccountRow[]
  /** The page of keys and of accounts the tables show. */
  keyPage: ListPage<KeyRow, number>
  accountPage: ListPage<AccountRow, number>
  /** Which lists are past their first page (a link back to it). */
  later: { keys: boolean; accounts: boolean; ledger: boolean }
  /** The account whose ledger and settings are shown (the selected one, or `default`). */
  account: string
  ledger: LedgerRow[]
  /** The ledger's next page: entries older than this id (null: the last page). */
  ledgerNext: number | null
  settings: AccountFraudView
  /** Now: a rotated key past its grace is shown expired (docs/operating.md#rotating-a-key). */
  now: number
  /** A key just created: shown on this page only. */
  created?: { key: string; prefix: string; name: string; account: string }
}

/** A key's status; a rotated one says until when it works, or that it has expired (refused as revoked). */
function keyStatus(k: KeyRow, now: number) {
  if (k.status === 'active' && k.expiresAt !== null) {
    return now >= k.expiresAt ? (
      <span class="status-bad">expired</span>
    ) : (
      <span class="status-warn">
        rotated, works until <Time at={k.expiresAt} />
      </span>
    )
  }
  return <span class={k.status === 'active' ? 'status-ok' : 'status-bad'}>{k.status}</span>
}

function keyActions(k: KeyRow, csrf: string) {
  const at = `/console/keys/${k.id}`
  const name = `key ${k.prefix}`
  if (k.status === 'revoked') return <span class="muted">none</span>
  return (
    <span class="actions">
      {k.status === 'active' ? (
        <ActionButton action={`${at}/disable`} csrf={csrf} label="Disable" name={name} />
      ) : (
        <ActionButton action={`${at}/enable`} csrf={csrf} label="Enable" name={name} />
      )}{' '}
      <ActionButton action={`${at}/revoke`} csrf={csrf} label="Revoke" name={name} danger confirm={`Revoke ${name}? It can never be used again.`} />
    </span>
  )
}

export function keysPage(frame: PageFrame, v: KeysView): string {
  return page(
    frame,
    <>
      {v.created ? createdKey(v.created) : null}
      {keysSection(frame, v)}
      {accountsSection(frame, v)}
      <div class="grid2">
        {creditsForm(frame.csrf, v)}
        {settingsForm(frame.csrf, v)}
      </div>
      {ledgerSection(frame, v)}
    </>,
  )
}

/** The accounts to pick from, the shown one selected. */
function accountOptions(v: KeysView) {
  return v.accounts.map((a) => (
    <option value={a.name} selected={a.name === v.account}>
      {a.name}
    </option>
  ))
}

/** A key just created: its value, shown this once. */
function createdKey(created: NonNullable<KeysView['created']>) {
  return (
    <section class="panel" aria-labelledby="created-title" id="created-key">
      <h2 id="created-title">New key for {created.account}</h2>
      <p>Copy it now: it is shown once, and otpd keeps only a hash.</p>
      <code class="secret" data-key>
        {created.key}
      </code>
    </section>
  )
}

function keysSection(frame: PageFrame, v: KeysView) {
  const csrf = frame.csrf
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <form method="post" action="/console/keys" class="panel fields" id="create-key" aria-label="Create a key">
        <Csrf token={csrf} />
        <div>
          <label for="key-name">Name</label>
          <input id="key-name" name="name" required maxlength={100} />
        </div>
        <div>
          <label for="key-account">Account</label>
          <select id="key-account" name="account">
            {accountOptions(v)}
          </select>
        </div>
        <button type="submit">Create key</button>
      </form>
      <Table
        caption="Keys"
        id="keys"
        empty="No key yet."
        rows={v.keyPage.rows}
        columns={[
          { label: 'Prefix', cell: (k) => <code>{k.prefix}</code> },
          { label: 'Name', cell: (k) => k.name },
          { label: 'Account', cell: (k) => k.account },
          { label: 'Status', cell: (k) => keyStatus(k, v.now) },
          { label: 'Created', cell: (k) => <Time at={k.createdAt} /> },
          { label: 'Last used', cell: (k) => <Time at={k.lastUsedAt} /> },
          { label: 'Actions', cell: (k) => keyActions(k, csrf) },
        ]}
      />
      <Pager
        of="the keys"
        next={v.keyPage.next === null ? null : `${scopedHref('/console/keys', frame, { keys_after: String(v.keyPage.next) })}#keys-title`}
        first={v.later.keys ? `${scopedHref('/console/keys', frame)}#keys-title` : null}
      />
    </section>
  )
}

function accountsSection(frame: PageFrame, v: KeysView) {
  return (
    <section aria-labelledby="accounts-title">
      <h2 id="accounts-title">Accounts and balances</h2>
      <Table
        caption="Accounts"
        id="accounts"
        rows={v.accountPage.rows}
        columns={[
          { label: 'Account', cell: (a) => a.name },
          { label: 'Balance', num: true, cell: (a) => fmt(a.balance) },
          { label: 'Code length', num: true, cell: (a) => (a.codeLength === null ? 'default' : String(a.codeLength)) },
          // The default account is made by the first migration, which kept no time: 0.
          { label: 'Created', cell: (a) => <Time at={a.createdAt} unknown="at install" /> },
        ]}
      />
      <Pager
        of="the accounts"
        next={v.accountPage.next === null ? null : `${scopedHref('/console/keys', frame, { accounts_after: String(v.accountPage.next) })}#accounts-title`}
        first={v.later.accounts ? `${scopedHref('/console/keys', frame)}#accounts-title` : null}
      />
    </section>
  )
}

/** A panel whose form acts on the shown account. */
function accountForm(p: { id: string; title: string; action: string; submit: string; csrf: string; account: string }, fields: Child) {
  return (
    <section aria-labelledby={`${p.id}-title`} class="panel">
      <h2 id={`${p.id}-title`}>
        {p.title} {p.account}
      </h2>
      <form method="post" action={p.action} class="fields" id={`${p.id}-form`}>
        <Csrf token={p.csrf} />
        <input type="hidden" name="account" value={p.account} />
        {fields}
        <button type="submit">{p.submit}</button>
      </form>
    </section>
  )
}

function creditsForm(csrf: string, v: KeysView) {
  const form = { id: 'credits', title: 'Credits of', action: '/console/credits', submit: 'Apply', csrf, account: v.account }
  return accountForm(
    form,
    <>
      <div>
        <label for="credits-op">Operation</label>
        <select id="credits-op" name="op">
          <option value="add">Add</option>
          <option value="deduct">Deduct</option>
        </select>
      </div>
      <div>
        <label for="credits-amount">Amount</label>
        <input id="credits-amount" name="amount" type="number" min={1} step={1} required inputmode="numeric" />
      </div>
      <div>
        <label for="credits-note">Note (why)</label>
        <input id="credits-note" name="note" maxlength={200} required />
      </div>
    </>,
  )
}

function settingsForm(csrf: string, v: KeysView) {
  const countries = v.settings.allowedCountries === null ? '' : v.settings.allowedCountries.join(',')
  const form = { id: 'settings', title: 'Settings of', action: '/console/accounts/settings', submit: 'Save settings', csrf, account: v.account }
  return accountForm(
    form,
    <>
      <div>
        <label for="settings-countries">Countries (ISO codes, * for all, empty for the config's)</label>
        <input id="settings-countries" name="countries" value={countries} placeholder="US,CA" />
      </div>
      <div>
        <label for="settings-cap">Daily credit cap (empty for none)</label>
        <input
          id="settings-cap"
          name="daily_credit_limit"
          type="number"
          min={0}
          step={1}
          inputmode="numeric"
          value={v.settings.dailyCreditLimit?.toString() ?? ''}
        />
      </div>
      <div>
        <label for="settings-test">Test recipients</label>
        <select id="settings-test" name="test_recipients">
          <option value="on" selected={v.settings.testRecipients}>
            on (free, not delivered)
          </option>
          <option value="off" selected={!v.settings.testRecipients}>
            off (charged like any other)
          </option>
        </select>
      </div>
    </>,
  )
}

/** The links of the ledger's pages keep the account it shows. */
const ledgerFrame = (frame: PageFrame, v: KeysView): Pick<PageFrame, 'scope' | 'keep'> => ({
  scope: frame.scope === undefined ? undefined : { ...frame.scope, account: v.account },
})

function ledgerSection(frame: PageFrame, v: KeysView) {
  return (
    <section aria-labelledby="ledger-title">
      <h2 id="ledger-title">Ledger of {v.account}</h2>
      <form method="get" action="/console/keys" class="fields">
        <div>
          <label for="ledger-account">Account</label>
          <select id="ledger-account" name="account" data-autosubmit="1">
            {accountOptions(v)}
          </select>
        </div>
        <input type="hidden" name="period" value={frame.scope?.period ?? '24h'} />
        <button type="submit" class="secondary">
          Show ledger
        </button>
      </form>
      <Table
        caption={`Ledger entries of ${v.account}, newest first`}
        id="ledger"
        rows={v.ledger}
        columns={[
          { label: 'When', cell: (e) => <Time at={e.createdAt} /> },
          { label: 'Kind', cell: (e) => e.kind },
          { label: 'Amount', num: true, cell: (e) => (e.kind === 'debit' ? `−${fmt(Math.abs(e.amount))}` : `+${fmt(Math.abs(e.amount))}`) },
          {
            label: 'Verification',
            cell: (e) => (e.verificationId ? <ShortId id={e.verificationId} href={`/console/verifications/${encodeURIComponent(e.verificationId)}`} /> : ''),
          },
          { label: 'Note', cell: (e) => <span class="wrap">{e.note ?? ''}</span> },
        ]}
      />
      <Pager
        of={`the ledger of ${v.account}`}
        next={v.ledgerNext === null ? null : `${scopedHref('/console/keys', ledgerFrame(frame, v), { ledger_before: String(v.ledgerNext) })}#ledger-title`}
        first={v.later.ledger ? `${scopedHref('/console/keys', ledgerFrame(frame, v))}#ledger-title` : null}
      />
    </section>
  )
}
