/**
 * The platforms a release is built for (docs/install.md#release-archives):
 * each archive's name and the Bun compile target whose runtime it embeds.
 */

export const TARGETS = {
  'linux-x64': 'bun-linux-x64',
  // CPUs without AVX2 (before Haswell, some virtual machines).
  'linux-x64-baseline': 'bun-linux-x64-baseline',
  'linux-arm64': 'bun-linux-arm64',
  'darwin-arm64': 'bun-darwin-arm64',
  'darwin-x64': 'bun-darwin-x64',
} as const

export type Target = keyof typeof TARGETS

export const isTarget = (t: string): t is Target => Object.hasOwn(TARGETS, t)

/** `otpd-1.2.0-linux-x64`: the archive's name without `.tar.gz`, and the directory it unpacks to. */
export const archiveBase = (version: string, target: Target): string => `otpd-${version}-${target}`

/** Semantic versions only (1.2.0, 1.2.0-rc.1); a leading `v` (a tag's name) is dropped. */
export function releaseVersion(arg: string): string | null {
  const v = arg.replace(/^v/, '')
  return /^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$/.test(v) ? v : null
}
