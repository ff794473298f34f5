/**
 * The console's answers in words (docs/console.md#the-json-api): one
 * catalogue, as http/error-texts.ts is for the API. The API's own messages
 * (404, 405, 500, bodies) are used as they are.
 */
export const ConsoleMsg = {
  signInRequired: 'Sign in to the console first',
  csrf: 'Missing or wrong CSRF token: send the X-CSRF-Token header (or the _csrf form field) that GET /console/api/session gives',
  signInInvalid: 'Invalid operator name or password',
  contentType: 'Content-Type must be application/json or application/x-www-form-urlencoded',
  signInLimited: (seconds: number) => `Too many failed sign-ins. Please try again in ${seconds} seconds.`,
  viewerReadOnly: (operator: string) =>
    `Operator '${operator}' has the viewer role, which reads only: an admin can change it with otpd operators set ${operator} --role admin`,
  keyNotFound: (ref: string) => `No key has id or prefix '${ref}'`,
} as const

/** The templated ones as patterns, for the OpenAPI document. */
export const SIGN_IN_LIMITED_PATTERN = '^Too many failed sign-ins\\. Please try again in [0-9]+ seconds\\.$'
