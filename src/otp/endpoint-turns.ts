/**
 * How the delivery loop shares its sending between webhook endpoints
 * (docs/events.md#fair-turns-and-slow-endpoints): each endpoint has at most
 * a set number of deliveries in flight, and one that keeps failing is paused
 * on its own, then tried one delivery at a time until one succeeds. The
 * engines apply these numbers in their claim and their record of an outcome.
 */

/** Failed tries in a row after which an endpoint is paused. */
export const PAUSE_AFTER_FAILURES = 5
/** The first pause; each failed try after a pause doubles it, up to MAX_PAUSE_MS. */
export const FIRST_PAUSE_MS = 30_000
export const MAX_PAUSE_MS = 600_000
/** Deliveries in flight to an endpoint that has failed PAUSE_AFTER_FAILURES times in a row (and is not paused): one, a probe. */
export const PROBE_IN_FLIGHT = 1
