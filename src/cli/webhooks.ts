/** `otpd webhooks ...`: add, list, remove, rotate-secret (docs/api.md#events). */
import { Command } from 'commander'
import type { EndpointRow } from '../otp/ports/index.ts'
import { formatTime, isoTime, printJson, withCore, operatorOption, initOption, noneYet, printListing, subcommand, type CommonOptions } from './common.ts'

/** An endpoint as `--json` shows it: never its secret. */
function endpointJson(e: EndpointRow) {
  return { id: e.id, account: e.account, url: e.url, events: e.events, created_at: isoTime(e.createdAt), rotated_at: isoTime(e.rotatedAt) }
}

export function webhooksCommand(): Command {
  const webhooks = new Command('webhooks').description('manage the endpoints that receive signed events (webhooks)')
  defineAdd(webhooks)
  defineList(webhooks)
  defineRemove(webhooks)
  defineRotateSecret(webhooks)
  return webhooks
}

function defineAdd(webhooks: Command): void {
  subcommand(
    webhooks,
    'add',
    'add an endpoint; its signing secret is printed once and cannot be shown again',
    'otpd webhooks add --url https://example.com/otpd-events',
    'otpd webhooks add --url https://example.com/hooks --account acme --events verification.approved,verification.locked',
  )
    .requiredOption('--url <url>', 'where events are POSTed (http:// or https://)')
    .option('--account <account>', 'account whose events it receives', 'default')
    .option('--events <types>', 'comma-separated event types (default: every type)')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((opts: CommonOptions & { url: string; account: string; events?: string }) =>
      withCore(opts, async ({ webhooks }) => {
        const e = await webhooks.add(opts)
        if (opts.json) return printJson({ id: e.id, account: e.account, url: e.url, events: e.events, secret: e.secret })
        process.stdout.write(
          `${e.secret}\n\nAdded webhook endpoint ${e.id} for account '${e.account}': ${e.url} (${e.events === null ? 'every event type' : e.events.join(', ')}).\n` +
            'Store the secret now: otpd keeps it encrypted and cannot show it again. Receivers check the webhook-signature header with it.\n',
        )
      }),
    )
}

function defineList(webhooks: Command): void {
  subcommand(webhooks, 'list', 'list endpoints (never their secrets)', 'otpd webhooks list', 'otpd webhooks list --account acme --json')
    .option('--account <account>', 'only endpoints of this account')
    .action((opts: CommonOptions & { account?: string }) =>
      withCore(
        opts,
        async ({ webhooks }) => {
          const rows = await webhooks.list(opts.account)
          if (opts.json) return printJson(rows.map(endpointJson))
          printListing(
            ['ID', 'ACCOUNT', 'URL', 'EVENTS', 'CREATED', 'ROTATED'],
            rows.map((e) => [e.id, e.account, e.url, e.events === null ? '*' : e.events.join(','), formatTime(e.createdAt), formatTime(e.rotatedAt, 'never')]),
            opts.account === undefined
              ? noneYet('otpd webhooks add --url https://example.com/otpd-events')
              : noneYet(`otpd webhooks add --url https://example.com/otpd-events --account ${opts.account}`, `for account '${opts.account}'`),
          )
        },
        { readOnly: true },
      ),
    )
}

function defineRemove(webhooks: Command): void {
  subcommand(webhooks, 'remove <id>', 'remove an endpoint; deliveries still due to it are dropped', 'otpd webhooks remove 3')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((id: string, opts: CommonOptions) =>
      withCore(opts, async ({ webhooks }) => {
        const e = await webhooks.remove(id)
        if (opts.json) return printJson(endpointJson(e))
        process.stdout.write(`removed webhook endpoint ${e.id} (${e.url})\n`)
      }),
    )
}

function defineRotateSecret(webhooks: Command): void {
  subcommand(webhooks, 'rotate-secret <id>', 'give an endpoint a new secret, printed once; the old one also signs for 24 h', 'otpd webhooks rotate-secret 3')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((id: string, opts: CommonOptions) =>
      withCore(opts, async ({ webhooks }) => {
        const r = await webhooks.rotateSecret(id)
        if (opts.json) return printJson({ ...endpointJson(r.endpoint), secret: r.secret, previous_secret_until: isoTime(r.previousUntil) })
        process.stdout.write(
          `${r.secret}\n\nNew secret for webhook endpoint ${r.endpoint.id} (${r.endpoint.url}).\n` +
            `Until ${formatTime(r.previousUntil)} every event carries two signatures (new one first), so receivers can switch at any time in between.\n`,
        )
      }),
    )
}
