/**
 * `otpd completion bash|zsh|fish` (docs/operating.md#shell-completion): a
 * completion script written from the command tree itself, so it always
 * knows every command and option of this binary. zsh uses the bash script
 * through its bashcompinit layer.
 */
import { Argument, Command } from 'commander'

const SHELLS = ['bash', 'zsh', 'fish'] as const
type Shell = (typeof SHELLS)[number]

interface Node {
  /** The words from the top: '' for `otpd`, 'keys create' for `otpd keys create`. */
  path: string
  subcommands: { name: string; description: string }[]
  /** The values an argument of this command must take (`.choices()`), offered as words. */
  choices: string[]
  options: { flags: string[]; description: string; takesValue: boolean }[]
}

/** Every command of the tree, depth first. */
function nodesOf(cmd: Command, path = ''): Node[] {
  const options = cmd.options
    .filter((o) => !o.hidden)
    .map((o) => ({ flags: [o.long, o.short].filter((f): f is string => f !== undefined), description: o.description, takesValue: o.required || o.optional }))
  options.push({ flags: ['--help', '-h'], description: 'show help', takesValue: false })
  const choices = cmd.registeredArguments.flatMap((a) => a.argChoices ?? [])
  const node: Node = { path, subcommands: cmd.commands.map((c) => ({ name: c.name(), description: c.description() })), choices, options }
  return [node, ...cmd.commands.flatMap((c) => nodesOf(c, path === '' ? c.name() : `${path} ${c.name()}`))]
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`

export function bashScript(program: Command): string {
  const nodes = nodesOf(program)
  const valued = [...new Set(nodes.flatMap((n) => n.options.filter((o) => o.takesValue).flatMap((o) => o.flags)))]
  const cases = nodes
    .map((n) => `    ${quote(n.path)}) words=${quote([...n.subcommands.map((s) => s.name), ...n.choices, ...n.options.flatMap((o) => o.flags)].join(' '))} ;;`)
    .join('\n')
  const paths = nodes.map((n) => quote(n.path)).join(' ')
  return `# otpd completion for bash (and zsh through bashcompinit): eval "$(otpd completion bash)"
_otpd() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="" w i words
  [ "$COMP_CWORD" -gt 0 ] && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
    ${valued.join('|')}) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
  esac
  local known=(${paths})
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) continue ;; esac
    local next="\${path:+$path }$w"
    local k
    for k in "\${known[@]}"; do [ "$k" = "$next" ] && path="$next" && break; done
  done
  case "$path" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -o default -F _otpd otpd
`
}

export function zshScript(program: Command): string {
  return `# otpd completion for zsh: eval "$(otpd completion zsh)"
autoload -U +X bashcompinit && bashcompinit
${bashScript(program)}`
}

export function fishScript(program: Command): string {
  const nodes = nodesOf(program)
  const names = (n: Node) => n.subcommands.map((s) => s.name).join(' ')
  const lines = ['# otpd completion for fish: otpd completion fish > ~/.config/fish/completions/otpd.fish', 'complete -c otpd -f']
  for (const n of nodes) {
    const words = n.path === '' ? [] : n.path.split(' ')
    // At this command: every word of its path seen, and none of its subcommands yet.
    const at = [
      ...(words.length === 0 ? ['__fish_use_subcommand'] : words.map((w) => `__fish_seen_subcommand_from ${w}`)),
      ...(n.subcommands.length > 0 && words.length > 0 ? [`not __fish_seen_subcommand_from ${names(n)}`] : []),
    ].join('; and ')
    for (const s of n.subcommands) lines.push(`complete -c otpd -n ${quote(at)} -a ${quote(s.name)} -d ${quote(s.description)}`)
    if (n.choices.length > 0) lines.push(`complete -c otpd -n ${quote(at)} -a ${quote(n.choices.join(' '))}`)
    for (const o of n.options) {
      const flags = o.flags.map((f) => (f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`)).join(' ')
      lines.push(`complete -c otpd -n ${quote(at)} ${flags}${o.takesValue ? ' -r -F' : ''} -d ${quote(o.description)}`)
    }
  }
  return `${lines.join('\n')}\n`
}

/** `otpd completion SHELL`; `program` is the whole tree, read when the command runs. */
export function completionCommand(program: () => Command): Command {
  return new Command('completion')
    .description('print a completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS))
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  $ echo \'eval "$(otpd completion bash)"\' >> ~/.bashrc\n' +
        '  $ echo \'eval "$(otpd completion zsh)"\' >> ~/.zshrc\n' +
        '  $ otpd completion fish > ~/.config/fish/completions/otpd.fish\n',
    )
    .action((shell: Shell) => {
      const write = { bash: bashScript, zsh: zshScript, fish: fishScript }[shell]
      process.stdout.write(write(program()))
    })
}
