/** `otpd events ...`: list and replay the signed events (docs/api.md#events). */
import { Command } from 'commander'
import { EVENT_TYPES } from '../otp/events.ts'
import type { EventRow } from '../otp/ports/index.ts'
import {
  formatTime,
  integerArg,
  isoTime,
  printJson,
  withCore,
  operatorOption,
  initOption,
  noneYet,
  printListing,
  subcommand,
  type CommonOptions,
} from './common.ts'

function eventJson(e: EventRow) {
  return {
    id: e.id,
    type: e.type,
    account: e.account,
    verification_id: e.verificationId,
    sequence: e.sequence,
    occurred_at: isoTime(e.occurredAt),
    status: e.status,
    endpoints: e.endpoints,
    attempts: e.attempts,
    last_error: e.lastError,
    // A refusal's rule, country and masked recipient (send.blocked only: docs/api.md#events).
    blocked: e.blocked,
  }
}

/** What the DETAIL column says (shown when a refusal is listed): for a refusal its rule, country and masked recipient. */
function detail(e: EventRow): string {
  const b = e.blocked
  if (b === null) return '-'
  return [`rule ${b.rule}`, b.country, b.recipient].filter(Boolean).join(' ')
}

export function eventsCommand(): Command {
  const events = new Command('events').description('list and replay the events sent to webhook endpoints')
  defineList(events)
  defineReplay(events)
  return events
}

function defineList(events: Command): void {
  subcommand(
    events,
    'list',
    'list the newest events, oldest first, with where their delivery stands',
    'otpd events list',
    'otpd events list --account acme --status failed --json',
    'otpd events list --type send.blocked',
  )
    .option('--account <account>', 'only events of this account')
    .option('--status <status>', 'only events whose delivery is pending, failed or delivered')
    .option('--type <type>', `only events of this type: ${EVENT_TYPES.join(', ')} (send.blocked shows the fraud guard's rule)`)
    .option('--limit <n>', 'at most this many (the newest)', integerArg('--limit', ' from 1'), 100)
    .action((opts: CommonOptions & { account?: string; status?: string; type?: string; limit: number }) =>
      withCore(
        opts,
        async ({ webhooks }) => {
          const rows = await webhooks.events({ account: opts.account, status: opts.status, type: opts.type, limit: Math.max(1, opts.limit) })
          if (opts.json) return printJson(rows.map(eventJson))
          const filter = [opts.status && `${opts.status}`, opts.type, opts.account && `for account '${opts.account}'`].filter(Boolean).join(' ')
          // DETAIL only when a refusal is listed: the other types have nothing to put there.
          const withDetail = rows.some((e) => e.blocked !== null)
          const pick = <T>(cells: T[]): T[] => (withDetail ? cells : cells.filter((_, i) => i !== 4))
          printListing(
            pick(['ID', 'TYPE', 'ACCOUNT', 'VERIFICATION', 'DETAIL', 'SEQ', 'OCCURRED', 'STATUS', 'ATTEMPTS', 'LAST ERROR']),
            rows.map((e) =>
              pick([
                e.id,
                e.type,
                e.account,
                e.verificationId ?? '-',
                detail(e),
                e.sequence,
                formatTime(e.occurredAt),
                e.status,
                e.attempts,
                e.lastError ?? '-',
              ]),
            ),
            opts.status !== undefined || opts.type !== undefined
              ? `none ${filter}: see every event with otpd events list${opts.account ? ` --account ${opts.account}` : ''}`
              : noneYet(
                  'events are recorded as codes are sent and verified through the API; to receive them: otpd webhooks add --url https://example.com/otpd-events',
                  filter || undefined,
                ),
          )
        },
        { readOnly: true },
      ),
    )
}

function defineReplay(events: Command): void {
  subcommand(
    events,
    'replay [id]',
    'send an event again (same id and body), or with --failed every failed delivery',
    'otpd events replay 0b6c3c52-5a0e-4a43-9d87-2f1f6f0f5b0e',
    'otpd events replay --failed',
  )
    .option('--failed', 'replay every delivery that failed')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((id: string | undefined, opts: CommonOptions & { failed?: boolean }) =>
      withCore(opts, async ({ webhooks }) => {
        if ((id === undefined) === !opts.failed) throw new Error('give either an event id or --failed (see: otpd events list)')
        if (id !== undefined) {
          const r = await webhooks.replay(id)
          if (opts.json) return printJson({ id: r.event.id, deliveries: r.deliveries })
          process.stdout.write(
            r.deliveries === 0
              ? `event ${r.event.id} (${r.event.type}) has no endpoint subscribed to it now: nothing to send\n`
              : `event ${r.event.id} (${r.event.type}) will be sent again to ${r.deliveries} endpoint${r.deliveries === 1 ? '' : 's'} by the running server\n`,
          )
          return
        }
        const r = await webhooks.replayFailed()
        if (opts.json) return printJson(r)
        process.stdout.write(
          `${r.deliveries} failed deliver${r.deliveries === 1 ? 'y' : 'ies'} of ${r.events} event${r.events === 1 ? '' : 's'} will be sent again by the running server\n`,
        )
      }),
    )
}
