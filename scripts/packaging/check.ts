/**
 * scripts/release --check: the release's acceptance check, which CI runs
 * once (docs/install.md#checking-a-release). It builds all five archives for
 * a check version, then checks that SHA256SUMS matches (sha256sum -c); that
 * each binary is built for its platform; that the Linux ones answer
 * --version with that version (arm64 under qemu-user-static with Debian's
 * arm64 libc); that the x64 archive, unpacked in an empty directory,
 * installs with DESTDIR and no Bun, and that the installed binary serves,
 * creates a key and verifies a code; that the archive's walk-through as
 * root works, in private namespaces (root-install-run.sh); that the
 * container image builds and
 * runs as documented (container-check.ts). The compose files are checked by
 * the test suite (test/ops/compose.test.ts): Debian's podman-compose has no
 * `config` command.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { checkContainer } from './container-check.ts'
import { buildRelease, type Release } from './release.ts'
import { checkServe } from './serve-check.ts'
import { archiveBase, TARGETS, type Target } from './targets.ts'

/** The Debian packages that hold each tool the check needs. */
const TOOLS: Record<string, string> = {
  sha256sum: 'coreutils',
  tar: 'tar',
  'qemu-aarch64-static': 'qemu-user-static',
  podman: 'podman',
  debootstrap: 'debootstrap',
}
const ARM64_LIBC = '/usr/aarch64-linux-gnu'

/** ELF e_machine / Mach-O cputype of each target's binary. */
const MACHINE: Record<Target, { format: 'elf' | 'macho'; machine: number }> = {
  'linux-x64': { format: 'elf', machine: 62 },
  'linux-x64-baseline': { format: 'elf', machine: 62 },
  'linux-arm64': { format: 'elf', machine: 183 },
  'darwin-arm64': { format: 'macho', machine: 0x0100000c },
  'darwin-x64': { format: 'macho', machine: 0x01000007 },
}

function platformOf(binary: string): string {
  const b = readFileSync(binary).subarray(0, 64)
  if (b.readUInt32BE(0) === 0x7f454c46) return `elf ${b.readUInt16LE(18)}`
  if (b.readUInt32LE(0) === 0xfeedfacf) return `macho ${b.readUInt32LE(4)}`
  return 'unknown'
}

function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): string {
  const p = Bun.spawnSync(cmd, { ...opts, stdout: 'pipe', stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`${cmd.join(' ')} exited with ${p.exitCode}: ${p.stderr}${p.stdout}`)
  return p.stdout.toString()
}

/** Each step of the check: its name and what it proved, or throws. */
function steps(r: Release, work: string): [string, () => Promise<string> | string][] {
  const unpacked = (t: Target) => join(work, 'unpacked', archiveBase(r.version, t))
  const want = `otpd ${r.version} (bun ${Bun.version})`
  const versionOf = (cmd: string[]) => {
    const out = run(cmd).trim()
    if (out !== want) throw new Error(`${cmd.join(' ')} printed '${out}', not '${want}'`)
    return out
  }
  return [
    [
      'tools',
      () => {
        const missing = Object.entries(TOOLS).filter(([t]) => Bun.which(t) === null)
        if (missing.length > 0) throw new Error(`missing: ${missing.map(([t, p]) => `${t} (apt-get install ${p})`).join(', ')}`)
        if (Bun.which('chroot') === null || Bun.which('unshare') === null) throw new Error('missing: chroot, unshare (coreutils, util-linux)')
        return 'all present'
      },
    ],
    [
      'SHA256SUMS',
      () => {
        const out = run(['sha256sum', '--strict', '-c', 'SHA256SUMS'], { cwd: r.dir })
        const ok = out
          .trim()
          .split('\n')
          .filter((l) => l.endsWith(': OK'))
        if (ok.length !== r.archives.length) throw new Error(`sha256sum -c: ${out}`)
        return `sha256sum -c: ${ok.length} archives OK`
      },
    ],
    [
      'platforms',
      () => {
        mkdirSync(join(work, 'unpacked'), { recursive: true })
        for (const t of Object.keys(TARGETS) as Target[]) {
          run(['tar', '-xzf', join(r.dir, `${archiveBase(r.version, t)}.tar.gz`), '-C', join(work, 'unpacked')])
          const got = platformOf(join(unpacked(t), 'otpd'))
          if (got !== `${MACHINE[t].format} ${MACHINE[t].machine}`) throw new Error(`${t}: the binary is ${got}`)
        }
        return 'ELF x86-64 (2), ELF aarch64, Mach-O arm64, Mach-O x86-64'
      },
    ],
    ['linux-x64 --version', () => versionOf([join(unpacked('linux-x64'), 'otpd'), '--version'])],
    ['linux-x64-baseline --version', () => versionOf([join(unpacked('linux-x64-baseline'), 'otpd'), '--version'])],
    ['linux-arm64 --version under qemu', () => versionOf(['qemu-aarch64-static', '-L', ARM64_LIBC, join(unpacked('linux-arm64'), 'otpd'), '--version'])],
    ['install from the archive', () => installAndServe(r, work)],
    ['install from the archive as root', () => installAsRoot(unpacked('linux-x64'), work)],
    ['container image', () => checkContainer(unpacked('linux-x64'), r.version, work)],
  ]
}

/** The x64 archive unpacked alone in an empty directory, installed with DESTDIR and no Bun, then served. */
async function installAndServe(r: Release, work: string): Promise<string> {
  const empty = join(work, 'install')
  const dest = join(work, 'install-root')
  mkdirSync(empty)
  run(['tar', '-xzf', join(r.dir, `${archiveBase(r.version, 'linux-x64')}.tar.gz`)], { cwd: empty })
  const noBun = join(work, 'no-bun')
  mkdirSync(noBun)
  writeFileSync(join(noBun, 'bun'), '#!/bin/sh\necho "bun was called" >&2\nexit 97\n')
  chmodSync(join(noBun, 'bun'), 0o755)
  const path = `${noBun}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`
  run(['./install.sh'], { cwd: join(empty, archiveBase(r.version, 'linux-x64')), env: { PATH: path, DESTDIR: dest } })
  const metricsToken = 'release-check-metrics-token-0123456789abcdef'
  const env = { PATH: path, OTPD_DATABASE__PATH: join(dest, 'var/lib/otpd/otpd.db'), OTPD_SERVER__METRICS_TOKEN: metricsToken }
  const common = ['--config', join(dest, 'etc/otpd/otp.config.toml')]
  const done = await checkServe({ otpd: [join(dest, 'usr/local/bin/otpd')], common, env, cwd: empty, version: r.version, metricsToken })
  return `install.sh with DESTDIR, then the installed binary: ${done}`
}

/** What root-install-run.sh leaves, in the owners and modes docs/operating.md#install-on-a-vm gives. */
const INSTALLED = [
  'root:root 755 /usr/local/bin/otpd',
  'otpd:otpd 750 /var/lib/otpd',
  'otpd:otpd 600 /var/lib/otpd/otpd.db',
  'otpd:otpd 600 /var/lib/otpd/otpd.secret',
  'root:otpd 640 /etc/otpd/otp.config.toml',
  'root:root 600 /etc/otpd/otpd.env',
  'root:root 644 /etc/systemd/system/otpd.service',
]

/** The walk-through as root, in private namespaces (root-install-run.sh): install.sh, then keys, credits, serve as otpd. */
function installAsRoot(archive: string, work: string): string {
  if (process.getuid?.() !== 0) throw new Error('needs root (for the namespaces and install.sh)')
  const dir = join(work, 'root-install')
  const out = join(dir, 'out')
  mkdirSync(out, { recursive: true })
  run(['unshare', '--mount', '--net', '--propagation', 'private', 'bash', join(import.meta.dir, 'root-install-run.sh'), archive, dir, out])
  const read = (f: string) => readFileSync(join(out, f), 'utf8')
  if (!/"verified":true/.test(read('verify.json'))) throw new Error(`verify answered ${read('verify.json')}; serve printed:\n${read('serve.log')}`)
  if (read('serve.rc').trim() !== '0') throw new Error(`serve exited with ${read('serve.rc').trim()} on SIGTERM`)
  if (!read('credits.log').includes('1000')) throw new Error(`credits add printed ${read('credits.log')}`)
  const files = read('files').trim().split('\n')
  if (JSON.stringify(files) !== JSON.stringify(INSTALLED)) throw new Error(`installed ${files.join('; ')}`)
  const user = /install\.sh: (created system user otpd|system user otpd exists)/.exec(read('install.log'))?.[1] ?? 'no word of the otpd user'
  return `sudo ./install.sh (${user}), then as otpd: keys create, credits add, serve, send, verify, stop; owners and modes as documented`
}

/** Builds the archives into `keep` (else a temporary directory, removed after) and checks them; the exit code. */
export async function runCheck(keep?: string): Promise<number> {
  const t0 = performance.now()
  const work = keep ?? mkdtempSync(join(tmpdir(), 'otpd-release-check-'))
  let failed = 0
  try {
    const release = await buildRelease(`${pkg.version}-check`, Object.keys(TARGETS) as Target[], join(work, 'out'), (l) => console.log(l))
    for (const [name, step] of steps(release, work)) {
      const t = performance.now()
      try {
        const what = await step()
        console.log(`check: ok: ${name}: ${what} (${((performance.now() - t) / 1000).toFixed(1)} s)`)
      } catch (err) {
        failed++
        console.log(`check: FAIL: ${name}: ${(err as Error).message}`)
      }
    }
  } catch (err) {
    failed++
    console.log(`check: FAIL: build: ${(err as Error).message}`)
  } finally {
    if (keep === undefined) rmSync(work, { recursive: true, force: true })
  }
  console.log(`check: ${failed === 0 ? 'passed' : `${failed} failed`} in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  return failed === 0 ? 0 : 1
}
