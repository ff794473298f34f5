/**
 * otpd's version: `otpd --version`, /metrics' otpd_build_info, the console's
 * System page and the OpenAPI document. A release build sets it to the
 * release's version (scripts/release passes `--define`, see docs/install.md);
 * from source and `bun run build` it is package.json's.
 */
import pkg from '../../package.json' with { type: 'json' }

declare const OTPD_RELEASE_VERSION: string | undefined

export const VERSION: string = typeof OTPD_RELEASE_VERSION === 'string' ? OTPD_RELEASE_VERSION : pkg.version
