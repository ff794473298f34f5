/**
 * scripts/otpd.service: its settings, and `systemd-analyze verify` and
 * `security` on it as scripts/install.sh installs it (Debian package `systemd`;
 * .ci/run installs it). verify only warns on a broken unit, so the tests
 * require silence, and show with broken copies that they can fail.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { install, REPO, writeStub, type Run } from '../kit/install.ts'

// Bun ignores bunfig's [test] timeout; systemd-analyze takes about a second, more on a busy machine.
setDefaultTimeout(30_000)

const UNIT = readFileSync(join(REPO, 'scripts', 'otpd.service'), 'utf8')
const linux = process.platform === 'linux'
const analyze = Bun.which('systemd-analyze')

/** The unit's settings (every section), as key -> values (a key may repeat). */
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
    // verify checks ExecReload's /bin/kill under --root; every real machine has one (procps / util-linux).
    mkdirSync(join(root, 'root', 'bin'), { recursive: true })
    writeStub(join(root, 'root', 'bin', 'kill'), 'kill')
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

describe('the systemd unit', () => {
  const s = settings(UNIT)

  test('runs otpd serve as otpd with the installed config', () => {
    expect(s.get('User')).toEqual(['otpd'])
    expect(s.get('Group')).toEqual(['otpd'])
    expect(s.get('ExecStart')).toEqual(['/usr/local/bin/otpd serve --config /etc/otpd/otp.config.toml'])
    // systemctl reload: serve reloads its config on SIGHUP (docs/operating.md).
    expect(s.get('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID'])
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
