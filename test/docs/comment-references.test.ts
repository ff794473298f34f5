/**
 * Every `docs/…#anchor` and every repository path cited in a comment of src/,
 * test/ or scripts/ resolves, so a renamed heading or a moved file cannot leave
 * a comment pointing at nothing. The rule is in docs/development.md#docs.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
// The slugger remark-validate-links uses (test/docs/links.test.ts), so both checks agree on an anchor.
import GithubSlugger from 'github-slugger'
import ts from 'typescript5'

const ROOT = join(import.meta.dir, '..', '..')
const TREES = ['src', 'test', 'scripts']

/** Extensions a cited path must end in to be checked: a token ending otherwise is prose, not a path. */
const EXTENSIONS = 'ts|tsx|md|sql|sh|json|lua|toml|js|css|service|c'
/** A path with at least one `/` (`store/sqlite/storage.ts`), or a bare file name (`links.test.ts`); an optional `#anchor`. */
const REFERENCE = new RegExp(`(?<![\\w./~$@*{<-])((?:[\\w.-]+/)*[\\w-][\\w.-]*\\.(?:${EXTENSIONS}))(#[\\w-]+)?(?![\\w/*-])`, 'g')

/** The repository's own kinds of file: a bare name of another kind (`Calls.json`) is more often someone else's. */
const OWN = /\.(ts|tsx|md|sh)$/

type Comment = { line: number; text: string }
type Reference = { file: string; line: number; path: string; anchor?: string }

/** Every file of src/, test/ and scripts/ this check reads: TypeScript and shell scripts. */
function sources(): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = `${dir}/${name}`
      if (name === 'node_modules') continue
      if (statSync(join(ROOT, path)).isDirectory()) walk(path)
      else if (/\.tsx?$/.test(name) || isShell(path)) out.push(path)
    }
  }
  for (const tree of TREES) walk(tree)
  return out.sort()
}

/** A shell script: `.sh`, or a `#!` line naming sh or bash (scripts/bench). */
function isShell(path: string): boolean {
  if (path.endsWith('.sh')) return true
  const head = readFileSync(join(ROOT, path), 'utf8').slice(0, 64)
  return /^#!.*\b(ba)?sh\b/.test(head)
}

/** The comments of a TypeScript file, from its syntax tree: a `//` inside a string is not one. */
function tsComments(path: string, text: string): Comment[] {
  const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind)
  const seen = new Map<number, Comment[]>()
  const take = (ranges: readonly ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue
      const start = file.getLineAndCharacterOfPosition(r.pos).line
      const lines = text.slice(r.pos, r.end).split('\n')
      seen.set(
        r.pos,
        lines.map((l, i) => ({ line: start + i + 1, text: l })),
      )
    }
  }
  const visit = (node: ts.Node) => {
    take(ts.getLeadingCommentRanges(text, node.getFullStart()))
    take(ts.getTrailingCommentRanges(text, node.getEnd()))
    node.forEachChild(visit)
  }
  visit(file)
  take(ts.getLeadingCommentRanges(text, file.endOfFileToken.getFullStart()))
  return [...seen.values()].flat()
}

/** The comments of a shell script: lines that start with `#`, the `#!` line left out. */
function shellComments(text: string): Comment[] {
  return text
    .split('\n')
    .map((l, i) => ({ line: i + 1, text: l }))
    .filter((c) => /^\s*#(?!!)/.test(c.text))
}

/**
 * The references a comment line cites. URLs, absolute paths, `./` paths (a
 * process's working directory) and globs are not the repository's; nor is a
 * bare name of another kind than its own (`Calls.json`) or a `.d.ts` one.
 */
function references(file: string, comment: Comment): Reference[] {
  const text = comment.text.replace(/\b[a-z]+:\/\/\S+/g, '')
  return [...text.matchAll(REFERENCE)]
    .filter((m) => !m[1]!.startsWith('./'))
    .filter((m) => m[1]!.includes('/') || (OWN.test(m[1]!) && !m[1]!.endsWith('.d.ts')))
    .map((m) => ({ file, line: comment.line, path: m[1]!, anchor: m[2]?.slice(1) }))
}

const slugCache = new Map<string, Set<string>>()

/** The heading anchors of a Markdown page, as GitHub (and remark-validate-links) computes them. */
function anchors(page: string): Set<string> {
  const cached = slugCache.get(page)
  if (cached) return cached
  const slugger = new GithubSlugger()
  const out = new Set<string>()
  let fence = false
  for (const line of readFileSync(join(ROOT, page), 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence
    const m = fence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (m) out.add(slugger.slug(m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')))
  }
  slugCache.set(page, out)
  return out
}

/** Where a cited path may live: the citing file's folder, a folder above it, or src/. */
function resolve(ref: Reference): string | undefined {
  const bases = ['src']
  for (let dir = dirname(ref.file); dir !== '.'; dir = dirname(dir)) bases.unshift(dir)
  bases.push('')
  for (const base of bases) {
    const full = join(ROOT, base, ref.path)
    if (existsSync(full)) return relative(ROOT, full)
  }
  return undefined
}

/** What is wrong with a reference, or undefined when it resolves. */
function fault(ref: Reference): string | undefined {
  const target = resolve(ref)
  if (!target) return 'no such file'
  if (ref.anchor && target.endsWith('.md') && !anchors(target).has(ref.anchor)) return `no heading #${ref.anchor} in ${target}`
  return undefined
}

/** Every reference cited in the comments of src/, test/ and scripts/. */
function allReferences(): Reference[] {
  const out: Reference[] = []
  for (const file of sources()) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    const comments = /\.tsx?$/.test(file) ? tsComments(file, text) : shellComments(text)
    for (const c of comments) out.push(...references(file, c))
  }
  return out
}

const show = (r: Reference) => `${r.file}:${r.line}: ${r.path}${r.anchor ? `#${r.anchor}` : ''}`

describe('references in comments', () => {
  test('every docs anchor and repository path cited in a comment resolves', () => {
    const refs = allReferences()
    const stale = refs.flatMap((r) => {
      const f = fault(r)
      return f ? [`${show(r)} (${f})`] : []
    })
    expect(stale).toEqual([])
    // The comments do cite pages, anchors and files: the check above looked at something.
    expect(refs.length).toBeGreaterThan(500)
    expect(refs.filter((r) => r.anchor).length).toBeGreaterThan(200)
  })
})

describe('the reference check itself', () => {
  const cite = (file: string, text: string) => references(file, { line: 7, text })

  test('fails on a stale anchor and on a stale path', () => {
    const [anchor] = cite('src/otp/events.ts', ' * Events (docs/api.md#no-such-heading), the domain side')
    expect(anchor).toEqual({ file: 'src/otp/events.ts', line: 7, path: 'docs/api.md', anchor: 'no-such-heading' })
    expect(fault(anchor!)).toBe('no heading #no-such-heading in docs/api.md')
    const [path] = cite('test/api/send.test.ts', '// as otp/no-such-file.ts decides')
    expect(fault(path!)).toBe('no such file')
    const [bare] = cite('src/otp/events.ts', '// the outbox (ports.ts EventOutbox)')
    expect(fault(bare!)).toBe('no such file')
  })

  test('resolves from the citing folder, a folder above it, or src/', () => {
    const ok = (file: string, text: string) => cite(file, text).map(fault)
    expect(ok('src/console/ui/routes.tsx', '// the same reads (ui/reads.ts)')).toEqual([undefined])
    expect(ok('test/api/send.test.ts', '// store/sqlite/storage.ts and docs/api.md#send-a-code')).toEqual([undefined, undefined])
    expect(ok('src/store/sqlite/start-checks.ts', '// secret.ts, engine.ts and main.ts')).toEqual([undefined, undefined, undefined])
  })

  test('leaves out what is not a repository path', () => {
    const text = '// https://example.com/a/b.ts, /etc/otpd/otp.config.toml, ./otp.config.toml, ~/.x/y.md, Calls.json, api.d.ts, test/**/*.test.ts'
    expect(cite('src/a.ts', text)).toEqual([])
  })

  test('reads comments, not strings', () => {
    const text = "const a = '// docs/gone.md#x' // docs/api.md#send-a-code\n/** src/otp/send.ts */\nconst b = <p>docs/x.md</p>\n"
    expect(
      tsComments('a.tsx', text)
        .flatMap((c) => references('a.tsx', c))
        .map((r) => r.path),
    ).toEqual(['docs/api.md', 'src/otp/send.ts'])
    expect(shellComments('#!/bin/sh\n# scripts/install.sh\necho docs/x.md\n').map((c) => c.line)).toEqual([2])
  })

  test('computes anchors as GitHub does', () => {
    expect(anchors('docs/configuration.md').has('provider-type-smtp')).toBe(true)
    expect(anchors('docs/operating.md').has('the-systemd-unit')).toBe(true)
    // A `#` line inside a code block is no heading.
    expect([...anchors('docs/operating.md')].some((a) => a.startsWith('backed-up'))).toBe(false)
  })
})
