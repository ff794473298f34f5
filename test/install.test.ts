/**
 * scripts/install.sh staged into a temporary DESTDIR with a stub binary (no
 * build needed): every file, mode and content, a second run that keeps the
 * operator's config, the refusals, a root install inside a private mount
 * namespace, and `systemd-analyze verify` on the installed unit (Debian
 * package `systemd`; .ci/run installs it).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, resolveConfig } from '../src/config/load.ts'

// Bun ignores bunfig's [test] timeout; systemd-analyze takes about a second, more on a busy machine.
setDefaultTimeout(30_000)

const REPO = join(import.meta.dir, '..')
const SCRIPT = join(REPO, 'scripts', 'install.sh')
const UNIT = readFileSync(join(REPO, 'scripts', 'otpd.service'), 'utf8')
const EXAMPLE = readFileSync(join(REPO, 'otp.config.example.toml'), 'utf8')
const linux = process.platform === 'linux'
const analyze = Bun.which('systemd-analyze')

let tmp: string
let dest: string
let stub: string
let first: Run

interface Run {
  code: number
  stdout: string
  stderr: string
}

function install(env: Record<string, string>, ...args: string[]): Run {
  const p = Bun.spawnSync(['bash', SCRIPT, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, cwd: tmpdir() })
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
}

function writeStub(path: string, text: string): void {
  writeFileSync(path, `#!/bin/sh\necho ${text}\n`)
  chmodSync(path, 0o755)
}

const mode = (p: string) => (statSync(join(dest, p)).mode & 0o7777).toString(8).padStart(4, '0')
const read = (p: string) => readFileSync(join(dest, p), 'utf8')

/** The unit's [Service] settings, as key -> values (a key may repeat). */
function settings(unit: string): Map<string, string[]> {
  const m = new Map<string, string[]>()
  for (const line of unit.split('\n')) {
    const kv = /^([A-Za-z]+)=(.*)$/.exec(line)
    if (kv) m.set(kv[1]!, [...(m.get(kv[1]!) ?? []), kv[2]!])
  }
  return m
}

/** A fresh DESTDIR with otpd installed from a stub binary; removed after fn. */
function staged(fn: (root: string) => void): void {
  const root = mkdtempSync(join(tmpdir(), 'otpd-verify-'))
  try {
    writeStub(join(root, 'stub'), 'otpd')
    const r = install({ DESTDIR: join(root, 'root'), OTPD_BINARY: join(root, 'stub') })
    expect(r.code).toBe(0)
    fn(join(root, 'root'))
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** `systemd-analyze verify` on the unit installed under root; it needs the stock units beside it (sysinit.target...). */
function verify(root: string): Run {
  const stock = ['/usr/lib/systemd/system', '/lib/systemd/system'].find((d) => existsSync(join(d, 'sysinit.target')))
  if (!stock) throw new Error('no stock systemd units found (install the Debian package systemd)')
  if (!existsSync(join(root, 'usr/lib/systemd/system'))) cpSync(stock, join(root, 'usr/lib/systemd/system'), { recursive: true })
  const p = Bun.spawnSync([analyze!, 'verify', '--man=no', `--root=${root}`, 'otpd.service'], { cwd: root })
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
}

describe.skipIf(!linux)('install.sh into a DESTDIR', () => {
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'otpd-install-'))
    dest = join(tmp, 'root')
    stub = join(tmp, 'otpd-v1')
    writeStub(stub, 'otpd-v1')
    first = install({ DESTDIR: dest, OTPD_BINARY: stub })
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  test('it succeeds and installs exactly the expected files with their modes', () => {
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const files: string[] = []
    const walk = (rel: string): void => {
      for (const e of readdirSync(join(dest, rel), { withFileTypes: true })) {
        const p = rel ? `${rel}/${e.name}` : e.name
        if (e.isDirectory()) walk(p)
        else files.push(`${mode(p)} ${p}`)
      }
    }
    walk('')
    expect(files.sort()).toEqual([
      '0600 etc/otpd/otpd.env',
      '0640 etc/otpd/otp.config.toml',
      '0644 etc/systemd/system/otpd.service',
      '0755 usr/local/bin/otpd',
    ])
    expect(mode('var/lib/otpd')).toBe('0750')
    expect(mode('etc/otpd')).toBe('0750')
  })

  test('the binary and the unit are copied as they are', () => {
    expect(read('usr/local/bin/otpd')).toBe(readFileSync(stub, 'utf8'))
    expect(read('etc/systemd/system/otpd.service')).toBe(UNIT)
  })

  test('the config is the example with the database in /var/lib/otpd, and it is valid', () => {
    const config = read('etc/otpd/otp.config.toml')
    expect(config).toBe(EXAMPLE.replace('\npath = "./data/otpd.db"\n', '\npath = "/var/lib/otpd/otpd.db"\n'))
    expect(config).not.toBe(EXAMPLE)
    const loaded = loadConfig({ file: join(dest, 'etc/otpd/otp.config.toml'), env: {} }).config
    expect(loaded).toEqual(resolveConfig({ database: { path: '/var/lib/otpd/otpd.db' } }))
  })

  test('the env file holds only comments', () => {
    const env = read('etc/otpd/otpd.env')
    expect(env.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([])
    expect(env).toContain('OTPD_<SECTION>__<KEY>')
  })

  test('with DESTDIR it changes nothing on the system and says what the operator must do', () => {
    expect(first.stdout).toContain(`Staged into ${dest}. On the target machine, as root, also run:`)
    expect(first.stdout).toContain('id -u otpd >/dev/null 2>&1 || useradd --system --user-group --home-dir /var/lib/otpd --no-create-home --shell ')
    expect(first.stdout).toContain('  chown otpd:otpd /var/lib/otpd\n')
    expect(first.stdout).toContain('  chown root:otpd /etc/otpd/otp.config.toml\n')
    expect(first.stdout).toContain('  systemctl daemon-reload\n')
    expect(first.stdout).toContain('systemctl enable --now otpd')
    expect(first.stdout).toContain('sudo -u otpd /usr/local/bin/otpd keys create --name backend --config /etc/otpd/otp.config.toml')
    expect(first.stdout).toContain('journalctl -u otpd')
  })

  test('a second run upgrades the binary and the unit and keeps the operator files', () => {
    const again = join(tmp, 'again')
    cpSync(dest, again, { recursive: true })
    const edited = '[server]\nlisten = "0.0.0.0:9000"\n'
    writeFileSync(join(again, 'etc/otpd/otp.config.toml'), edited)
    writeFileSync(join(again, 'etc/otpd/otpd.env'), 'OTPD_LOGGING__LEVEL=debug\n')
    writeFileSync(join(again, 'etc/systemd/system/otpd.service'), '[Service]\nExecStart=/bin/false\n')
    const v2 = join(tmp, 'otpd-v2')
    writeStub(v2, 'otpd-v2')
    const r = install({ DESTDIR: again }, '--binary', v2)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('kept the existing /etc/otpd/otp.config.toml')
    expect(r.stdout).toContain('kept the existing /etc/otpd/otpd.env')
    expect(readFileSync(join(again, 'etc/otpd/otp.config.toml'), 'utf8')).toBe(edited)
    expect(readFileSync(join(again, 'etc/otpd/otpd.env'), 'utf8')).toBe('OTPD_LOGGING__LEVEL=debug\n')
    expect(readFileSync(join(again, 'usr/local/bin/otpd'), 'utf8')).toBe(readFileSync(v2, 'utf8'))
    expect(readFileSync(join(again, 'etc/systemd/system/otpd.service'), 'utf8')).toBe(UNIT)
    // No temporary files left behind.
    expect(readdirSync(join(again, 'etc/otpd')).sort()).toEqual(['otp.config.toml', 'otpd.env'])
    expect(readdirSync(join(again, 'usr/local/bin'))).toEqual(['otpd'])
  })

  test('a missing binary is refused with a clear message and nothing is installed', () => {
    const empty = join(tmp, 'nothing')
    const r = install({ DESTDIR: empty, OTPD_BINARY: join(tmp, 'dist/otpd') })
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`install.sh: error: ${join(tmp, 'dist/otpd')} does not exist: run bun run build first (or give another binary with --binary PATH)\n`)
    expect(existsSync(empty)).toBe(false)
  })

  test('without DESTDIR it needs root', () => {
    // A copy readable by an unprivileged user; as root, drop to nobody to try.
    const copy = mkdtempSync(join(tmpdir(), 'otpd-install-nobody-'))
    try {
      chmodSync(copy, 0o755)
      for (const f of ['scripts/install.sh', 'scripts/otpd.service', 'otp.config.example.toml']) {
        cpSync(join(REPO, f), join(copy, f), { recursive: true })
      }
      copyFileSync(stub, join(copy, 'otpd'))
      chmodSync(join(copy, 'otpd'), 0o755)
      const cmd = ['bash', join(copy, 'scripts/install.sh'), '--binary', join(copy, 'otpd')]
      const asRoot = process.getuid?.() === 0
      const p = Bun.spawnSync(asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...cmd] : cmd, {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        cwd: copy,
      })
      expect(p.stderr.toString()).toBe('install.sh: error: installing on this machine needs root: run it with sudo (or set DESTDIR=DIR to stage the files into DIR)\n')
      expect(p.exitCode).toBe(1)
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })
})

// The real thing without DESTDIR: as root, in a private mount namespace whose
// /etc (a copy), /usr/local/bin and /var/lib are temporary, so the host is untouched.
// Skipped when this machine already has an otpd user (the first run would not create it).
const hostHasOtpd = () => /^otpd:/m.test(readFileSync('/etc/passwd', 'utf8'))
const canNamespace = linux && process.getuid?.() === 0 && !hostHasOtpd() && Bun.spawnSync(['unshare', '-m', '--propagation', 'private', 'true']).exitCode === 0

describe.skipIf(!canNamespace)('install.sh as root on a system (in a private mount namespace)', () => {
  test('creates the otpd user and gives it its directories; a second run keeps the user', () => {
    const x = mkdtempSync(join(tmpdir(), 'otpd-install-root-'))
    try {
      writeStub(join(x, 'stub'), 'otpd')
      writeFileSync(
        join(x, 'run.sh'),
        `set -euo pipefail
cp -a /etc ${x}/etc && mkdir ${x}/bin ${x}/varlib
mount --bind ${x}/etc /etc && mount --bind ${x}/bin /usr/local/bin && mount --bind ${x}/varlib /var/lib
bash ${SCRIPT} --binary ${x}/stub > ${x}/first.txt
bash ${SCRIPT} --binary ${x}/stub > ${x}/second.txt
getent passwd otpd
stat -c '%a %U:%G %n' /usr/local/bin/otpd /var/lib/otpd /etc/otpd /etc/otpd/otp.config.toml /etc/otpd/otpd.env /etc/systemd/system/otpd.service
cd /
runuser -u otpd -- head -c 0 /etc/otpd/otp.config.toml && echo otpd reads the config
runuser -u otpd -- touch /var/lib/otpd/probe && echo otpd writes its state directory
runuser -u otpd -- head -c 0 /etc/otpd/otpd.env 2>/dev/null || echo otpd cannot read the env file
`,
      )
      const p = Bun.spawnSync(['unshare', '-m', '--propagation', 'private', 'bash', join(x, 'run.sh')], { cwd: x })
      expect(p.stderr.toString()).toBe('')
      expect(p.exitCode).toBe(0)
      const [passwd, ...rest] = p.stdout.toString().trimEnd().split('\n')
      expect(passwd).toMatch(/^otpd:x:[0-9]+:[0-9]+::\/var\/lib\/otpd:\/(usr\/)?sbin\/nologin$/)
      expect(rest).toEqual([
        '755 root:root /usr/local/bin/otpd',
        '750 otpd:otpd /var/lib/otpd',
        '750 root:otpd /etc/otpd',
        '640 root:otpd /etc/otpd/otp.config.toml',
        '600 root:root /etc/otpd/otpd.env',
        '644 root:root /etc/systemd/system/otpd.service',
        'otpd reads the config',
        'otpd writes its state directory',
        'otpd cannot read the env file',
      ])
      expect(readFileSync(join(x, 'first.txt'), 'utf8')).toContain('install.sh: created system user otpd\n')
      expect(readFileSync(join(x, 'first.txt'), 'utf8')).not.toContain('Staged into')
      expect(readFileSync(join(x, 'second.txt'), 'utf8')).toContain('install.sh: system user otpd exists\n')
      expect(readFileSync(join(x, 'second.txt'), 'utf8')).toContain('install.sh: kept the existing /etc/otpd/otp.config.toml\n')
      // The host itself has no otpd user from this test.
      expect(hostHasOtpd()).toBe(false)
    } finally {
      rmSync(x, { recursive: true, force: true })
    }
  })
})

describe.skipIf(!linux)('the systemd unit', () => {
  const s = settings(UNIT)

  test('runs otpd serve as otpd with the installed config', () => {
    expect(s.get('User')).toEqual(['otpd'])
    expect(s.get('Group')).toEqual(['otpd'])
    expect(s.get('ExecStart')).toEqual(['/usr/local/bin/otpd serve --config /etc/otpd/otp.config.toml'])
    expect(s.get('WorkingDirectory')).toEqual(['/var/lib/otpd'])
    expect(s.get('EnvironmentFile')).toEqual(['-/etc/otpd/otpd.env'])
    expect(s.get('Restart')).toEqual(['on-failure'])
    expect(s.get('KillSignal')).toEqual(['SIGTERM'])
    // serve drains for up to 5 s: systemd must not kill it sooner.
    expect(Number(s.get('TimeoutStopSec')?.[0])).toBeGreaterThan(5)
    expect(s.get('RestartSec')).toHaveLength(1)
    expect(s.get('LimitNOFILE')).toHaveLength(1)
    expect(s.get('WantedBy')).toEqual(['multi-user.target'])
  })

  test('is hardened, and leaves MemoryDenyWriteExecute off for the JIT', () => {
    for (const [k, v] of Object.entries({
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      ReadWritePaths: '/var/lib/otpd',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectKernelModules: 'yes',
      ProtectKernelLogs: 'yes',
      ProtectControlGroups: 'yes',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      LockPersonality: 'yes',
      CapabilityBoundingSet: '',
      SystemCallFilter: '@system-service',
      SystemCallErrorNumber: 'EPERM',
    })) {
      expect([k, s.get(k)]).toEqual([k, [v]])
    }
    expect(s.has('MemoryDenyWriteExecute')).toBe(false)
  })
})

describe.skipIf(!linux)('systemd-analyze', () => {
  test('systemd-analyze is installed (Debian package systemd)', () => {
    expect(analyze ?? 'systemd-analyze not found: apt-get install -y systemd').toEndWith('/systemd-analyze')
  })

  test.skipIf(!analyze)('verify accepts the installed unit without a single warning', () => {
    staged((root) => {
      const r = verify(root)
      expect(r.stdout + r.stderr).toBe('')
      expect(r.code).toBe(0)
    })
  })

  // The check above can fail: verify exits 0 on an unknown key or a bad value
  // and only warns, so a broken unit must produce output.
  test.skipIf(!analyze).each([
    ['a misspelt key', (u: string) => u.replace('ProtectSystem=strict', 'ProtectSytem=strict')],
    ['a bad value', (u: string) => u.replace('KillSignal=SIGTERM', 'KillSignal=SIGBOGUS')],
    ['a missing ExecStart binary', (u: string) => u.replace('/usr/local/bin/otpd serve', '/usr/local/bin/otpd-missing serve')],
  ])('verify complains about %s', (_what, breakIt) => {
    staged((root) => {
      const unit = join(root, 'etc/systemd/system/otpd.service')
      writeFileSync(unit, breakIt(readFileSync(unit, 'utf8')))
      const r = verify(root)
      expect(r.stdout + r.stderr).toContain('otpd.service')
    })
  })

  test.skipIf(!analyze)('the offline security review rates the unit at an exposure of at most 2.0', () => {
    staged((root) => {
      verify(root)
      const p = Bun.spawnSync([analyze!, 'security', '--offline=true', `--root=${root}`, '--threshold=20', 'otpd.service'], { cwd: root })
      expect([p.exitCode, /Overall exposure level for otpd.service: ([0-9.]+)/.exec(p.stdout.toString())?.[1]]).toEqual([0, expect.any(String)])
    })
  })
})
