/** Preloaded before every test file (bunfig.toml): the suite's own cleanup after each test (test/kit/cleanup.ts). */
import { afterEach } from 'bun:test'
import { cleanUp } from './cleanup.ts'

afterEach(cleanUp)
