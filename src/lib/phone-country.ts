/**
 * A phone number's country and prefix for the fraud guard (docs/api.md#fraud-guard),
 * from libphonenumber-js metadata, never a table of our own: the `min` build,
 * which gives the same country as `max` for every number and weighs less
 * (docs/fraud-guard.md says how that was checked).
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/min'
import { getCountries, isSupportedCountry } from 'libphonenumber-js/min'

/** The country of a number the metadata cannot place (an unassigned range, a non-geographic code). */
export const UNKNOWN_COUNTRY = 'ZZ'

export interface Destination {
  /** ISO 3166-1 alpha-2, or `ZZ`. */
  country: string
  /** `+` and the E.164 digits without the last 4; the country for numbers of fewer than 8 digits. */
  prefix: string
}

/** `e164` is a validated `+` followed by 2-15 digits. */
export function destinationOf(e164: string): Destination {
  const country = parsePhoneNumberFromString(e164)?.country ?? UNKNOWN_COUNTRY
  const digits = e164.length - 1
  return { country, prefix: digits < 8 ? country : e164.slice(0, -4) }
}

/** Whether `code` names a country of the metadata (or is `ZZ`, which an operator may allow or look at too). */
export function isKnownCountry(code: string): boolean {
  return code === UNKNOWN_COUNTRY || (/^[A-Z]{2}$/.test(code) && isSupportedCountry(code))
}

export function knownCountries(): string[] {
  return getCountries()
}

/** A prefix for logs: as much as a masked recipient shows (its first 5 characters), the rest starred. */
export function maskPrefix(prefix: string): string {
  return prefix.startsWith('+') && prefix.length > 5 ? prefix.slice(0, 5) + '*'.repeat(prefix.length - 5) : prefix
}
