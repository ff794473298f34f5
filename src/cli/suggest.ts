/**
 * "Did you mean …?" for an unknown command (docs/operating.md#cli): the
 * nearest name by edit distance (lib/nearest-name.ts), else the command a
 * word usually means in other tools (`credits show` -> `credits balance`,
 * `keys rm` -> `keys revoke`), else, at the top, the group that has a
 * command of that name (`otpd balance` -> `otpd credits balance`).
 */
import type { Command } from 'commander'
import { nearestName } from '../lib/nearest-name.ts'

/** Words other tools use, and the commands they mean here, in order of preference. */
const SYNONYMS: Record<string, readonly string[]> = {
  show: ['balance', 'status', 'list'],
  get: ['balance', 'status', 'list'],
  view: ['balance', 'status', 'list'],
  info: ['status', 'balance', 'list'],
  ls: ['list'],
  rm: ['remove', 'revoke'],
  del: ['remove', 'revoke'],
  delete: ['remove', 'revoke'],
  new: ['create', 'add'],
  make: ['create', 'add'],
  grant: ['add'],
  topup: ['add'],
  edit: ['set'],
  update: ['set'],
  modify: ['set'],
  change: ['set'],
}

/** The full command line to suggest for `name` under `parent`, or undefined. */
export function suggestCommand(parent: Command, name: string): string | undefined {
  const names = parent.commands.map((c) => c.name())
  const path = commandPath(parent)
  const near = nearestName(name, names) ?? SYNONYMS[name.toLowerCase()]?.find((n) => names.includes(n))
  if (near !== undefined) return `${path} ${near}`
  if (parent.parent !== null) return undefined
  const groups = parent.commands.filter((g) => g.commands.some((c) => c.name() === name))
  return groups.length === 1 ? `${path} ${groups[0]!.name()} ${name}` : undefined
}

function commandPath(cmd: Command): string {
  return cmd.parent === null ? cmd.name() : `${commandPath(cmd.parent)} ${cmd.name()}`
}

/** On every command that has subcommands: an unknown one is refused with the nearest and where to look. */
export function suggestUnknownCommands(cmd: Command): void {
  if (cmd.commands.length === 0) return
  cmd.on('command:*', (operands: string[]) => {
    const name = operands[0] ?? ''
    const near = suggestCommand(cmd, name)
    // The top level adds its own '(run with --help for usage)'.
    const help = cmd.parent === null ? '' : `\n(run ${commandPath(cmd)} --help for usage)`
    cmd.error(`error: unknown command '${name}'${near === undefined ? '' : ` (did you mean ${near}?)`}${help}`, { code: 'commander.unknownCommand' })
  })
  cmd.commands.forEach(suggestUnknownCommands)
}
