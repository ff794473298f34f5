/**
 * The fraud guard's settings from the config (`[fraud]`), read at start and
 * on every reload (reload.ts), and the config check of its country codes.
 */
import type { Config } from '../config/schema.ts'
import type { ConfigCheck } from '../config/load.ts'
import { isKnownCountry } from '../lib/phone-country.ts'
import type { FraudSettings } from '../otp/fraud.ts'

export function fraudSettingsOf(config: Config): FraudSettings {
  const f = config.fraud
  return {
    mode: f.mode,
    allowedCountries: [...f.allowed_countries],
    whatsappAllowedCountries: f.whatsapp_allowed_countries ? [...f.whatsapp_allowed_countries] : null,
    ipPerHour: f.ip_per_hour,
    newCountryPerHour: f.new_country_per_hour,
    conversionGraceSeconds: f.conversion_grace_seconds,
    minSends: f.min_sends,
    minConversion: f.min_conversion,
  }
}

/**
 * A code the phone metadata does not know (`UK` for `GB`) would never match a
 * number: said at load, not found out later. Checked even when another entry
 * of the list failed the schema (`"gb"`), so every problem shows in one run.
 */
export const fraudCheck: ConfigCheck = (config) => {
  const fraud = config.fraud as Record<string, unknown> | undefined
  return ['allowed_countries', 'whatsapp_allowed_countries'].flatMap((key) => {
    const list: unknown = fraud?.[key]
    if (!Array.isArray(list)) return []
    return list
      .filter((c): c is string => typeof c === 'string' && /^[A-Z]{2}$/.test(c) && !isKnownCountry(c))
      .map(
        (c) =>
          `fraud.${key} has '${c}', which is no country code of the phone metadata (ISO 3166-1 alpha-2, for example GB, US; ZZ for numbers of no known country)`,
      )
  })
}
