/**
 * scripts/install.sh staged into a temporary DESTDIR with a stub binary (no
 * build needed): every file, mode and content, a second run that keeps the
 * operator's config, the refusals; and a root install inside a private mount
 * namespace. The unit itself: systemd-unit.test.ts.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, resolveConfig } from '../../src/config/load.ts'
import { install, REPO, SCRIPT, writeStub, type Run } from '../kit/install.ts'

// Bun ignores bunfig's [test] timeout; these tests run shell scripts and processes.
setDefaultTimeout(30_000)

const UNIT = readFileSync(join(REPO, 'scripts', 'otpd.service'), 'utf8')
/** The pages of docs/ and the pictures they show, installed beside the README so that its relative links work there. */
const PAGES = readdirSync(join(REPO, 'docs'))
  .filter((f) => f.endsWith('.md') || f.endsWith('.png'))
  .sort()
const EXAMPLE = readFileSync(join(REPO, 'otp.config.example.toml'), 'utf8')
const linux = process.platform === 'linux'

let tmp: string
let dest: string
let stub: string
let first: Run

const mode = (p: string) => (statSync(join(dest, p)).mode & 0o7777).toString(8).padStart(4, '0')
const read = (p: string) => readFileSync(join(dest, p), 'utf8')

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
    expect(files.sort()).toEqual(
      [
        '0600 etc/otpd/otpd.env',
        '0640 etc/otpd/otp.config.toml',
        '0644 etc/systemd/system/otpd.service',
        '0755 usr/local/bin/otpd',
        // Where `otpd --help` points: the README and docs/, laid out as in the repository.
        '0644 usr/share/doc/otpd/README.md',
        ...PAGES.map((f) => `0644 usr/share/doc/otpd/docs/${f}`),
      ].sort(),
    )
    expect(mode('var/lib/otpd')).toBe('0750')
    expect(mode('etc/otpd')).toBe('0750')
  })

  test('the binary and the unit are copied as they are', () => {
    expect(read('usr/local/bin/otpd')).toBe(readFileSync(stub, 'utf8'))
    expect(read('etc/systemd/system/otpd.service')).toBe(UNIT)
  })

  test('the README and every page of docs/ are copied as they are', () => {
    expect(PAGES).toContain('operating.md')
    expect(read('usr/share/doc/otpd/README.md')).toBe(readFileSync(join(REPO, 'README.md'), 'utf8'))
    for (const f of PAGES) expect(read(`usr/share/doc/otpd/docs/${f}`)).toBe(readFileSync(join(REPO, 'docs', f), 'utf8'))
    expect(first.stdout).toContain('installed /usr/share/doc/otpd/README.md and /usr/share/doc/otpd/docs/')
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
    writeFileSync(join(again, 'usr/share/doc/otpd/docs/api.md'), 'an old page\n')
    writeFileSync(join(again, 'usr/share/doc/otpd/docs/retired.md'), 'a page no longer shipped\n')
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
    // The docs are replaced, and a page that is no longer shipped goes.
    expect(readFileSync(join(again, 'usr/share/doc/otpd/docs/api.md'), 'utf8')).toBe(readFileSync(join(REPO, 'docs', 'api.md'), 'utf8'))
    expect(readdirSync(join(again, 'usr/share/doc/otpd/docs')).sort()).toEqual(PAGES)
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
      expect(p.stderr.toString()).toBe(
        'install.sh: error: installing on this machine needs root: run it with sudo (or set DESTDIR=DIR to stage the files into DIR)\n',
      )
      expect(p.exitCode).toBe(1)
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })
})

// The real thing without DESTDIR: as root, in a private mount namespace whose
// /etc (a copy), /usr/local/bin, /var/lib and /usr/share/doc are temporary, so the host is untouched.
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
cp -a /etc ${x}/etc && mkdir ${x}/bin ${x}/varlib ${x}/doc
mount --bind ${x}/etc /etc && mount --bind ${x}/bin /usr/local/bin && mount --bind ${x}/varlib /var/lib
if [ -d /usr/share/doc ]; then mount --bind ${x}/doc /usr/share/doc; fi
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
