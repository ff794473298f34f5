/** `otpd hooks list`: the identity servers' hooks of the config, their URLs and last use (docs/integrations.md#listing-hooks). */
import { Command } from 'commander'
import { listHooks } from '../app/index.ts'
import { formatTime, isoTime, load, noneYet, printJson, printListing, subcommand, withCore, type CommonOptions } from './common.ts'

export function hooksCommand(): Command {
  const hooks = new Command('hooks').description("list the identity servers' hooks ([hooks.NAME] in the config)")
  subcommand(hooks, 'list', 'list the configured hooks with their URL and last use', 'otpd hooks list', 'otpd hooks list --json').action(
    (opts: CommonOptions) =>
      withCore(
        opts,
        async (core) => {
          const rows = await listHooks(core, load(opts).config)
          if (opts.json) {
            return printJson(rows.map((h) => ({ name: h.name, type: h.type, account: h.account, url: h.url, last_used_at: isoTime(h.lastUsedAt) })))
          }
          printListing(
            ['NAME', 'TYPE', 'ACCOUNT', 'URL', 'LAST USED'],
            rows.map((h) => [h.name, h.type, h.account, h.url, formatTime(h.lastUsedAt, 'never')]),
            noneYet('add a [hooks.NAME] table to the config (docs/integrations.md)'),
          )
        },
        { readOnly: true },
      ),
  )
  return hooks
}
