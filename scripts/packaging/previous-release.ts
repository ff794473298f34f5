/**
 * The previous release's binary, which the upgrade test runs before this
 * code (docs/install.md#upgrades): the newest `v*` tag before HEAD, else
 * UNTAGGED_BASE. Built once from `git archive` of that commit (its own
 * package.json build script; the locked dependencies linked when its
 * bun.lock is this one's, else installed) and cached in
 * node_modules/.cache/otpd-previous/COMMIT/otpd.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './build.ts'

/** Until a release is tagged: the commit the release archives were added on top of. */
export const UNTAGGED_BASE = 'ee37a5d39e58c30cd871311779a3c2d6a00301a9'

const CACHE = join(ROOT, 'node_modules', '.cache', 'otpd-previous')

export type Previous = { commit: string; name: string } | { skip: string }

function git(...args: string[]): { ok: boolean; out: string } {
  const p = Bun.spawnSync(['git', ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  return { ok: p.exitCode === 0, out: p.stdout.toString().trim() }
}

/** Which commit the previous release is, or why it cannot be had here (no git, a shallow clone). */
export function previousRelease(): Previous {
  if (Bun.which('git') === null) return { skip: 'git is not installed' }
  if (!git('rev-parse', '--git-dir').ok) return { skip: 'not a git repository' }
  const tag = git('describe', '--tags', '--abbrev=0', '--match', 'v*', 'HEAD~1')
  if (tag.ok && tag.out) return { commit: git('rev-parse', `${tag.out}^{commit}`).out, name: tag.out }
  if (!git('cat-file', '-e', `${UNTAGGED_BASE}^{commit}`).ok) return { skip: `commit ${UNTAGGED_BASE} is not in this clone (a shallow clone?)` }
  return { commit: UNTAGGED_BASE, name: UNTAGGED_BASE.slice(0, 7) }
}

function run(cmd: string[], cwd: string): void {
  const p = Bun.spawnSync(cmd, { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed (${p.exitCode}): ${p.stderr.toString().slice(-2000)}`)
}

/** The previous release's compiled otpd: from the cache, else built (a minute at most) and cached. */
export function previousBinary(commit: string): string {
  const binary = join(CACHE, commit, 'otpd')
  if (existsSync(binary)) return binary
  mkdirSync(join(CACHE, commit), { recursive: true })
  const src = mkdtempSync(join(CACHE, 'build-'))
  try {
    run(['bash', '-o', 'pipefail', '-c', `git archive --format=tar ${commit} | tar -x -C '${src}'`], ROOT)
    if (readFileSync(join(src, 'bun.lock'), 'utf8') === readFileSync(join(ROOT, 'bun.lock'), 'utf8')) {
      symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'))
    } else {
      run(['bun', 'install', '--frozen-lockfile'], src)
    }
    run(['bun', 'run', 'build'], src)
    // Renamed into place: two test runs building at once never see half a file.
    renameSync(join(src, 'dist', 'otpd'), binary)
    return binary
  } finally {
    rmSync(src, { recursive: true, force: true })
  }
}
