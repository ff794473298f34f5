/** Runs scripts/install.sh for the install and systemd unit tests. */
import { chmodSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const REPO = join(import.meta.dir, '..', '..')
export const SCRIPT = join(REPO, 'scripts', 'install.sh')

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** scripts/install.sh with only PATH and the given variables in its environment. */
export function install(env: Record<string, string>, ...args: string[]): Run {
  return installWith(SCRIPT, env, ...args)
}

/** The installer `script` (scripts/install.sh, or an unpacked archive's copy) with only PATH and the given variables in its environment. */
export function installWith(script: string, env: Record<string, string>, ...args: string[]): Run {
  const p = Bun.spawnSync(['bash', script, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, cwd: tmpdir() })
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
}

/** A shell script standing in for dist/otpd, so the tests need no build. */
export function writeStub(path: string, text: string): void {
  writeFileSync(path, `#!/bin/sh\necho ${text}\n`)
  chmodSync(path, 0o755)
}
