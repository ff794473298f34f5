/**
 * What a config check refused: the problems of the ConfigError that `fn`
 * throws, or none when it accepts the config. Any other error is rethrown.
 */
import { ConfigError } from '../../src/config/load.ts'

export function configProblems(fn: () => unknown): string[] {
  try {
    fn()
    return []
  } catch (err) {
    if (err instanceof ConfigError) return err.problems
    throw err
  }
}
