/**
 * What a test opened, closed by the suite after it: test/kit/setup.ts, which
 * bunfig.toml preloads, runs `cleanUp` after every test of every file, so no
 * test file writes an afterEach to close its stubs, servers or directories.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const pending: (() => unknown)[] = []

/** Runs `fn` after the current test (the newest first). */
export function afterTest(fn: () => unknown): void {
  pending.push(fn)
}

/** Closes `thing` after the current test; returns it. */
export function closeAfterTest<T extends { close(): unknown }>(thing: T): T {
  pending.push(() => thing.close())
  return thing
}

/** A new directory under the system's temp dir, removed after the current test. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  pending.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Runs what the test left, newest first, each awaited; a failure is thrown once all have run. */
export async function cleanUp(): Promise<void> {
  const errors: unknown[] = []
  for (const fn of pending.splice(0).reverse()) {
    try {
      await fn()
    } catch (err) {
      errors.push(err)
    }
  }
  if (errors.length > 0) throw errors[0]
}
