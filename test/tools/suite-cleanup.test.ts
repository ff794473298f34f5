/**
 * The suite owns cleanup (test/kit/cleanup.ts, run after every test by
 * test/kit/setup.ts): what a test registered runs newest first, so a thing
 * made from another is closed before it; and no other file writes its own
 * afterEach.
 */
import { expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterTest, cleanUp } from '../kit/cleanup.ts'

const TEST_DIR = join(import.meta.dir, '..')

/** Every TypeScript file under test/, relative to it. */
function testFiles(dir = TEST_DIR, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return testFiles(path, `${prefix}${name}/`)
    return name.endsWith('.ts') ? [`${prefix}${name}`] : []
  })
}

/** The code of a file without its comments, which may name afterEach. */
const code = (file: string) =>
  readFileSync(join(TEST_DIR, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')

test('cleanUp runs what the test registered newest first, awaiting each, and all of it though one throws', async () => {
  const ran: string[] = []
  afterTest(() => ran.push('made first'))
  afterTest(async () => {
    await Bun.sleep(1)
    ran.push('made second')
  })
  afterTest(() => {
    ran.push('made last')
    throw new Error('made last failed')
  })
  await expect(cleanUp()).rejects.toThrow('made last failed')
  expect(ran).toEqual(['made last', 'made second', 'made first'])
  await cleanUp()
  expect(ran).toHaveLength(3)
})

test('no file but test/kit/setup.ts calls afterEach: a test registers its cleanup where it makes the thing', () => {
  const files = testFiles()
  expect(files).toContain('kit/setup.ts')
  expect(files.filter((f) => /\bafterEach\s*\(/.test(code(f)))).toEqual(['kit/setup.ts'])
})
