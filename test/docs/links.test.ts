/**
 * Every relative link and heading anchor in README.md and docs/ resolves,
 * checked by remark-validate-links (offline: no repository host is asked), and
 * every relative link stays inside README.md and docs/, which
 * scripts/install.sh installs together under /usr/share/doc/otpd: a link to a
 * source file would be broken there.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, normalize, relative } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')
const REMARK = join(ROOT, 'node_modules', 'remark-cli', 'cli.js')
const PLUGIN = join(ROOT, 'node_modules', 'remark-validate-links', 'index.js')
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** What scripts/install.sh installs together: the pages and the pictures they show (docs/*.png). */
const INSTALLED = [
  ...PAGES,
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.png'))
    .map((f) => `docs/${f}`),
]

/** remark with remark-validate-links over README.md and docs/ in `dir`: its exit code and its warnings. */
function validateLinks(dir: string): { code: number; report: string } {
  const p = Bun.spawnSync(
    [
      process.execPath,
      REMARK,
      '--no-config',
      '--no-ignore',
      '--no-color',
      '--no-stdout',
      '--frail',
      '--quiet',
      '--use',
      `${PLUGIN}=repository:false`,
      'README.md',
      'docs',
    ],
    { cwd: dir },
  )
  return { code: p.exitCode ?? -1, report: p.stdout.toString() + p.stderr.toString() }
}

/** The targets of the Markdown links of a page, code blocks and code spans left out. */
function linkTargets(markdown: string): string[] {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)
}

describe('the docs', () => {
  test('every relative link and heading anchor in README.md and docs/ resolves', () => {
    const r = validateLinks(ROOT)
    expect(r.report).toBe('')
    expect(r.code).toBe(0)
  })

  test('relative links stay inside README.md and docs/ (what is installed together)', () => {
    const outside: string[] = []
    let relativeLinks = 0
    for (const page of PAGES) {
      for (const target of linkTargets(readFileSync(join(ROOT, page), 'utf8'))) {
        if (/^(https?|mailto):/.test(target) || target.startsWith('#')) continue
        relativeLinks++
        const file = normalize(join(dirname(page), target.split('#')[0]!))
        if (!INSTALLED.includes(relative('.', file))) outside.push(`${page}: ${target}`)
      }
    }
    expect(outside).toEqual([])
    // The pages do link to each other: the check above looked at something.
    expect(relativeLinks).toBeGreaterThan(50)
  })
})

describe('the link check itself', () => {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-docs-links-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  // A copy of the docs with one fault each, so this file proves the check can fail.
  const broken = (name: string, page: string, from: string, to: string): string => {
    const copy = join(dir, name)
    cpSync(join(ROOT, 'README.md'), join(copy, 'README.md'))
    cpSync(join(ROOT, 'docs'), join(copy, 'docs'), { recursive: true })
    const text = readFileSync(join(copy, page), 'utf8')
    expect(text).toContain(from)
    writeFileSync(join(copy, page), text.replace(from, to))
    return copy
  }

  test.each([
    ['an anchor in another page', 'docs/troubleshooting.md', '(operating.md#the-systemd-unit)', '(operating.md#the-systemd-units)', 'the-systemd-units'],
    ['an anchor in the same page', 'docs/api.md', 'and [Lockout](#lockout)', 'and [Lockout](#lock-out)', 'lock-out'],
    ['a missing page', 'README.md', '(docs/benchmarks.md)', '(docs/benchmark.md)', 'benchmark.md'],
  ])('fails on a broken link: %s', (name, page, from, to, named) => {
    const r = validateLinks(broken(name.replaceAll(' ', '-'), page, from, to))
    expect(r.code).toBe(1)
    expect(r.report).toContain(named)
  })
})
