/** The `[[routing]]` workflows as `channel: "auto"` reads them (otp/workflow.ts AutoRoute), from a checked config. */
import type { Config } from '../config/schema.ts'
import type { AutoRoute } from '../otp/workflow.ts'
import type { Channel } from '../otp/types.ts'

export function autoRoutesOf(config: Config): AutoRoute[] {
  return config.routing.map((r) => {
    const route: AutoRoute = { countries: r.countries }
    if (r.workflow) route.workflow = r.workflow as Channel[]
    if (r.channel_timeout !== undefined) route.channelTimeout = r.channel_timeout
    return route
  })
}
