/**
 * `otpd completion bash|zsh|fish` (docs/operating.md#shell-completion): the
 * bash script run by a real bash completes commands, subcommands, options,
 * an argument's choices and file names after an option that takes a value.
 */
import { expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliEnv } from '../kit/cli.ts'

/** What the script offers for the words typed so far (the last one is being completed). */
function complete(script: string, words: string[]): string[] {
  const line = words.map((w) => `'${w}'`).join(' ')
  const p = Bun.spawnSync(['bash', '-c', `source "${script}"; COMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _otpd; printf '%s\\n' "\${COMPREPLY[@]}"`])
  expect(p.stderr.toString()).toBe('')
  return p.stdout.toString().split('\n').filter(Boolean)
}

test('bash: commands, subcommands, options, choices and file names', async () => {
  const env = await cliEnv()
  const r = env.run('completion', 'bash')
  expect(r.code).toBe(0)
  const script = join(env.dir, 'otpd.bash')
  writeFileSync(script, r.stdout)
  expect(complete(script, ['otpd', 'cre'])).toEqual(['credits'])
  expect(complete(script, ['otpd', 'keys', ''])).toEqual(['create', 'list', 'rotate', 'disable', 'enable', 'revoke', '--help', '-h'])
  expect(complete(script, ['otpd', '--config', 'x.toml', 'credits', 'b'])).toEqual(['balance'])
  expect(complete(script, ['otpd', 'events', 'list', '--t'])).toEqual(['--type'])
  expect(complete(script, ['otpd', 'completion', ''])).toEqual(['bash', 'zsh', 'fish', '--help', '-h'])
  expect(complete(script, ['otpd', 'keys', 'create', '--config', join(env.dir, 'otp.conf')])).toEqual([join(env.dir, 'otp.config.toml')])
})

test('zsh loads the bash script through bashcompinit; fish gets its own; another shell is refused', async () => {
  const env = await cliEnv()
  const zsh = env.run('completion', 'zsh').stdout
  expect(zsh).toContain('autoload -U +X bashcompinit && bashcompinit\n')
  expect(zsh).toContain('complete -o default -F _otpd otpd\n')
  const fish = env.run('completion', 'fish').stdout
  expect(fish).toContain("complete -c otpd -n '__fish_use_subcommand' -a 'keys' -d 'manage API keys'\n")
  expect(fish).toContain(
    "complete -c otpd -n '__fish_seen_subcommand_from keys; and not __fish_seen_subcommand_from create list rotate disable enable revoke' -a 'create'",
  )
  expect(fish).toContain("complete -c otpd -n '__fish_seen_subcommand_from events; and __fish_seen_subcommand_from list' -l type -r -F")
  const bad = env.run('completion', 'tcsh')
  expect([bad.code, bad.stdout]).toEqual([1, ''])
  expect(bad.stderr).toContain("'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.")
})
