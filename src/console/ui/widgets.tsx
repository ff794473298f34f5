/** @jsxImportSource hono/jsx */
/** Small pieces the console's pages share: tables that scroll, figures, times, numbers, the CSRF field. */
import type { Child } from 'hono/jsx'
import { CSRF_FIELD } from './layout.tsx'

/** The console's one time format: "2026-01-01 12:00:00 UTC" (the CLI's too, docs/console.md#times-and-codes). */
export const timeText = (at: number): string => {
  const iso = new Date(at).toISOString()
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`
}

/** A UTC time as "2026-01-01 12:00:00 UTC", in a <time> element with its ISO value; `unknown` for a time not kept (stored as 0). */
export function Time(props: { at: number | null | undefined; unknown?: string }) {
  if (props.at === null || props.at === undefined) return <span class="muted">never</span>
  if (props.at === 0) return <span class="muted">{props.unknown ?? '—'}</span>
  return <time datetime={new Date(props.at).toISOString()}>{timeText(props.at)}</time>
}

/**
 * A long id shown cut to its first characters with an ellipsis (CSS), whole
 * in its text (copy, search, screen readers) and its title, so an id column
 * stays narrow (docs/console.md#lists).
 */
export function ShortId(props: { id: string; href?: string }) {
  return props.href ? (
    <a href={props.href} title={props.id} class="short-id">
      {props.id}
    </a>
  ) : (
    <code title={props.id} class="short-id">
      {props.id}
    </code>
  )
}

/** A page of a list, and the cursor of the next one (null: this is the last). */
export interface ListPage<T, C> {
  rows: T[]
  next: C | null
}

/**
 * Where a paged list goes on (docs/console.md#lists): the first page, and the
 * next one while there is one. `of` names the list for a screen reader.
 */
export function Pager(props: { of: string; next: string | null; first: string | null }) {
  if (props.next === null && props.first === null) return null
  return (
    <nav class="pager" aria-label={`Pages of ${props.of}`}>
      {props.first !== null ? <a href={props.first}>← First page</a> : null}
      {props.next !== null ? (
        <a href={props.next} rel="next">
          Next page →
        </a>
      ) : (
        <span class="muted">Last page</span>
      )}
    </nav>
  )
}

/** What `ZZ` means, where a country column may show it (docs/console.md#times-and-codes). */
export const ZZ_MEANS = "ZZ: a number of no known country (otpd could not place it in any country's numbering plan)"

/** A country code; `ZZ` explained in its title. */
export function Country(props: { code: string | null | undefined; none?: string }) {
  if (!props.code) return <>{props.none ?? ''}</>
  return props.code === 'ZZ' ? <abbr title={ZZ_MEANS}>ZZ</abbr> : props.code
}

/** The note under a table that may show `ZZ`. */
export function CountryNote() {
  return <p class="hint">{ZZ_MEANS}.</p>
}

export const fmt = (n: number): string => n.toLocaleString('en-US')
export const pct = (ratio: number | null | undefined): string =>
  ratio === null || ratio === undefined || !Number.isFinite(ratio) ? '–' : `${(ratio * 100).toFixed(1)} %`

/** A ratio as a percentage and a native meter (a screen reader reads the text). */
export function Ratio(props: { value: number | null | undefined }) {
  const v = props.value
  if (v === null || v === undefined || !Number.isFinite(v)) return <span class="muted">–</span>
  return (
    <span>
      {pct(v)}{' '}
      <meter min={0} max={1} low={0.2} optimum={1} value={v} aria-hidden="true">
        {pct(v)}
      </meter>
    </span>
  )
}

export interface Column<T> {
  label: string
  num?: boolean
  cell: (row: T) => Child
}

/** A table in a box that scrolls sideways on a narrow screen; `empty` when there is no row. */
export function Table<T>(props: { caption: string; columns: Column<T>[]; rows: T[]; empty?: string; id?: string }) {
  return (
    // A scrolling region is focusable, so it can be scrolled by keyboard.
    <section class="table-wrap" aria-label={props.caption} tabindex={0} id={props.id}>
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" class={c.num ? 'num' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 ? (
            <tr>
              <td class="empty" colspan={props.columns.length}>
                {props.empty ?? 'Nothing in this period.'}
              </td>
            </tr>
          ) : (
            props.rows.map((r) => (
              <tr>
                {props.columns.map((c) => (
                  <td class={c.num ? 'num' : undefined}>{c.cell(r)}</td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </section>
  )
}

/** Headline figures as a description list. */
export function Figures(props: { items: { label: string; value: string; id?: string }[]; label: string }) {
  return (
    <dl class="figures" aria-label={props.label}>
      {props.items.map((i) => (
        <div class="figure">
          <dt>{i.label}</dt>
          <dd data-figure={i.id}>{i.value}</dd>
        </div>
      ))}
    </dl>
  )
}

export function Csrf(props: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD} value={props.token} />
}

/** A one-button form posting to `action` (with the CSRF token); `confirm` asks first (console.js). */
export function ActionButton(props: {
  action: string
  csrf: string
  label: string
  name: string
  danger?: boolean
  confirm?: string
  fields?: Record<string, string>
}) {
  return (
    <form method="post" action={props.action} data-confirm={props.confirm}>
      <Csrf token={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([k, v]) => (
        <input type="hidden" name={k} value={v} />
      ))}
      <button type="submit" class={props.danger ? 'danger' : 'secondary'} aria-label={`${props.label} ${props.name}`}>
        {props.label}
      </button>
    </form>
  )
}
