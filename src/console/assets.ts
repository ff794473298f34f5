/**
 * The console's static files, embedded in the binary by text imports (no CDN,
 * no web font: the console works with no network). Each is served under
 * /console/assets/ with its content hash in the name and a year-long immutable
 * cache; a new build changes the hash, so a browser never keeps a stale one.
 */
import { createHash } from 'node:crypto'
import { Elysia } from 'elysia'
import htmx from 'htmx.org/dist/htmx.min.js' with { type: 'text' }
import uplotCss from 'uplot/dist/uPlot.min.css' with { type: 'text' }
import uplot from 'uplot/dist/uPlot.iife.min.js' with { type: 'text' }
import consoleCss from './assets/console.css' with { type: 'text' }
import consoleJs from './assets/console.js' with { type: 'text' }
import favicon from './assets/favicon.svg' with { type: 'text' }

export const ASSET_PREFIX = '/console/assets/'

interface Asset {
  /** The hashed file name, as pages link it. */
  name: string
  type: string
  body: string
}

const TYPES = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' } as const

function asset(base: string, ext: keyof typeof TYPES, body: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12)
  return { name: `${base}.${hash}.${ext}`, type: TYPES[ext], body }
}

/** In the order pages load them: uPlot before the console's script, which draws with it. */
export const ASSETS = {
  css: asset('console', 'css', consoleCss),
  uplotCss: asset('uplot', 'css', uplotCss),
  htmx: asset('htmx', 'js', htmx),
  uplot: asset('uplot', 'js', uplot),
  js: asset('console', 'js', consoleJs),
  favicon: asset('favicon', 'svg', favicon),
} as const

export const assetUrl = (a: Asset): string => ASSET_PREFIX + a.name

const byName = new Map(Object.values(ASSETS).map((a) => [a.name, a]))

/** GET /console/assets/:name: open (a page needs its styles before sign-in); an unknown or old name is 404. */
export function consoleAssets() {
  return new Elysia({ name: 'console-assets' }).get(`${ASSET_PREFIX}:name`, ({ params }) => {
    const a = byName.get(params.name)
    if (!a) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } })
    return new Response(a.body, {
      headers: { 'content-type': a.type, 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
    })
  })
}
