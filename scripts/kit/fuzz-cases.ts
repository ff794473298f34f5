/**
 * Generated hostile requests for the fuzz run (docs/reliability.md), from a seeded
 * PRNG so a run reproduces: malformed and truncated JSON, wrong types, huge and
 * deeply nested bodies, unicode and NUL, duplicate keys, odd and repeated
 * headers, wrong content types, long URLs, wrong methods, and raw bytes that
 * are barely HTTP. Shared by scripts/proofs/fuzz.ts and test/api/fuzz.test.ts.
 */

export interface FuzzKeys {
  active: string
  disabled: string
  revoked: string
}

/** A request fetch can send. */
export interface FetchCase {
  kind: 'fetch'
  label: string
  method: string
  path: string
  headers: [string, string][]
  body?: string | Uint8Array
}

/** Bytes written to a raw TCP socket (then the write side is closed). */
export interface RawCase {
  kind: 'raw'
  label: string
  bytes: Uint8Array
}

export type FuzzCase = FetchCase | RawCase

type Rand = () => number

const enc = new TextEncoder()

export function makeGenerator(rand: Rand, keys: FuzzKeys) {
  const int = (n: number) => Math.floor(rand() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!
  const chance = (p: number) => rand() < p

  const WEIRD_STRINGS = [
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\u0000123456',
    '123456\u0000',
    '\uD800',
    '\uDFFF\uD800',
    '\u202E+1415',
    '\uFEFF+14155550123',
    '１２３４５６',
    '٠١٢٣٤٥',
    '+14155550123\n',
    '+1 415 555 0123',
    '++14155550123',
    '+0',
    '+1',
    '+1234567890123456',
    'null',
    'undefined',
    'NaN',
    '{code}',
    '{code}'.repeat(300),
    'a'.repeat(1601) + '{code}',
    '😀'.repeat(1000) + '{code}',
    '\r\nBcc: x@example.com',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    'ada@example.com',
    'ADA@EXAMPLE.COM',
    'a@b',
    '@example.com',
    'a'.repeat(65) + '@example.com',
    'x@' + 'a'.repeat(250) + '.com',
    'ü@example.com',
    'success@otpd.test',
    'fail@otpd.test',
    '+15550100001',
    '+15550100002',
    '+15550100003',
    '123456',
    '1234',
    '12345678901',
    '00000000',
    '-1234',
    '12.34',
    '1e5',
    '0x1234',
    'sms',
    'SMS',
    'email',
    'voice',
    'fax',
    '00000000-0000-4000-8000-000000000000',
    '../../etc/passwd',
    '%00',
    '\\u0000',
  ]
  const randomUnicode = (n: number) => {
    let s = ''
    for (let i = 0; i < n; i++) {
      const r = rand()
      s +=
        r < 0.5
          ? String.fromCharCode(32 + int(95))
          : r < 0.7
            ? String.fromCharCode(int(0x20))
            : r < 0.9
              ? String.fromCodePoint(int(0xd7ff))
              : String.fromCodePoint(0x10000 + int(0xfffff))
    }
    return s
  }
  const weirdValue = (depth = 0): unknown => {
    const r = int(14)
    switch (r) {
      case 0:
        return null
      case 1:
        return pick([true, false])
      case 2:
        return pick([0, -1, 1, 59, 60, 300, 3600, 3601, 1.5, 1e308, -1e308, 2 ** 53, 123456, Number.MIN_VALUE])
      case 3:
        return depth < 3 ? Array.from({ length: int(4) }, () => weirdValue(depth + 1)) : []
      case 4:
        return depth < 3 ? { a: weirdValue(depth + 1), code: weirdValue(depth + 1) } : {}
      case 5:
        return randomUnicode(int(40))
      default:
        return pick(WEIRD_STRINGS)
    }
  }
  const plausible = (path: string): Record<string, unknown> =>
    path.includes('send')
      ? {
          channel: pick(['sms', 'email', 'voice']),
          recipient: pick(['+14155550123', 'ada@example.com', '+15550100001', 'success@otpd.test', '+15550100002']),
          ...(chance(0.3) ? { code: String(100000 + int(900000)) } : {}),
          ...(chance(0.2) ? { expires_in: 60 + int(3541) } : {}),
        }
      : { verification_id: pick(['00000000-0000-4000-8000-000000000000', crypto.randomUUID()]), code: String(100000 + int(900000)) }

  /** A body object: plausible fields, some replaced, dropped or added. */
  const mutatedObject = (path: string): Record<string, unknown> => {
    const o = plausible(path)
    const fields = ['channel', 'recipient', 'message', 'subject', 'expires_in', 'code', 'verification_id', '__proto__', 'constructor', 'x'.repeat(int(100) + 1)]
    const n = 1 + int(3)
    for (let i = 0; i < n; i++) {
      const f = pick(fields)
      if (chance(0.2)) delete o[f]
      else o[f] = weirdValue()
    }
    return o
  }

  const nested = (depth: number, open: string, close: string, inner = '1') => open.repeat(depth) + inner + close.repeat(depth)

  const jsonBody = (path: string): { label: string; body: string | Uint8Array } => {
    const r = int(20)
    const good = JSON.stringify(mutatedObject(path))
    switch (r) {
      case 0:
        return { label: 'truncated json', body: good.slice(0, int(good.length)) }
      case 1:
        return { label: 'deep array', body: nested(1 + int(8000), '[', ']') }
      case 2:
        return { label: 'deep object', body: nested(1 + int(2000), '{"a":', '}') }
      case 3:
        return { label: 'deep inside field', body: `{"channel":"sms","recipient":${nested(1 + int(5000), '[', ']')}}` }
      case 4:
        return {
          label: 'duplicate keys',
          body: `{"channel":"sms","channel":${JSON.stringify(weirdValue())},"recipient":"+14155550123","recipient":${JSON.stringify(weirdValue())},"code":"123456","code":"12"}`,
        }
      case 5:
        return { label: 'not an object', body: pick(['[]', '"x"', '1', 'true', 'null', '[{"channel":"sms"}]', '""', '-0', '1e999']) }
      case 6:
        return {
          label: 'not json',
          body: pick([
            '',
            ' ',
            '{',
            '}',
            '{"a"',
            "{'a':1}",
            '{a:1}',
            '{"a":1,}',
            'NaN',
            'undefined',
            '\u0000',
            '{"a":1}{"b":2}',
            '{"a":01}',
            '{"a":"\\x41"}',
            '{"a":"\\ud800"}',
          ]),
        }
      case 7: {
        const bytes = new Uint8Array(1 + int(200))
        for (let i = 0; i < bytes.length; i++) bytes[i] = int(256)
        return { label: 'random bytes', body: bytes }
      }
      case 8: {
        const b = enc.encode(good)
        const i = int(b.length)
        const out = new Uint8Array(b.length + 1)
        out.set(b.subarray(0, i))
        out[i] = pick([0xc3, 0xff, 0xfe, 0x80, 0xed, 0xf4])
        out.set(b.subarray(i), i + 1)
        return { label: 'invalid utf-8', body: out }
      }
      case 9:
        return { label: 'bom', body: '\uFEFF' + good }
      case 10: {
        const target = pick([16 * 1024 - 10, 16 * 1024, 16 * 1024 + 1, 20_000, 100_000])
        const pad = Math.max(0, target - good.length - 10)
        return { label: `big body ~${target}`, body: `{"pad":"${'x'.repeat(pad)}",${good.slice(1)}` }
      }
      case 11:
        return { label: 'nul inside json', body: good.replace(':', ':\u0000') }
      case 12:
        return { label: 'escaped nul and controls', body: JSON.stringify({ ...plausible(path), message: 'a\u0000b{code}', subject: 'x\u0007' }) }
      case 13:
        return { label: 'many fields', body: JSON.stringify(Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, i]))) }
      default:
        return { label: 'mutated fields', body: good }
    }
  }

  const CONTENT_TYPES = [
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json;charset=latin1',
    ' application/json ',
    'application/json, text/plain',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonp',
    'application/json-patch+json',
    '*/*',
    '',
    'application/json\t',
  ]
  const authHeaders = (): [string, string][] => {
    // Most cases carry the active key, so they reach body parsing and validation.
    if (chance(0.6)) return [['authorization', `Bearer ${keys.active}`]]
    const r = int(16)
    const key = pick([keys.active, keys.active, keys.active, keys.disabled, keys.revoked])
    switch (r) {
      case 0:
        return []
      case 1:
        return [['authorization', `Basic ${btoa('a:b')}`]]
      case 2:
        return [['authorization', 'Bearer']]
      case 3:
        return [['authorization', `Bearer ${'x'.repeat(1 + int(4000))}`]]
      case 4:
        return [['x-api-key', key]]
      case 5:
        return [
          ['authorization', `Bearer ${key}`],
          ['x-api-key', keys.revoked],
        ]
      case 6:
        return [['authorization', `bearer    ${key}   `]]
      case 7:
        return [['authorization', `Bearer otpd_${'A'.repeat(40)}`]]
      case 8:
        return [['authorization', `Bearer ${key.slice(0, -1)}`]]
      case 9:
        // Repeated header: fetch joins them with ", ".
        return [
          ['authorization', `Bearer ${key}`],
          ['authorization', `Bearer ${keys.active}`],
        ]
      case 10:
        return [
          ['x-api-key', key],
          ['x-api-key', key],
        ]
      default:
        return [['authorization', `Bearer ${key}`]]
    }
  }
  const PATHS = ['/api/v1/send', '/api/v1/verify', '/api/v1/send/', '/api/v1/verify/']
  const oddPath = (): string =>
    pick([
      '/',
      '/api',
      '/api/v1',
      '/api/v2/send',
      '/API/V1/SEND',
      '/api/v1/send?x=1',
      '/api/v1/verify?verification_id=1&code=123456',
      '/api/v1//send',
      '/api/v1/send//',
      '/api/v1/%73end',
      '/api/v1/send%00',
      '/api/v1/../v1/send',
      '/api/v1/send#frag',
      '/api/v1/send;jsessionid=1',
      '/api/v1/' + 'a'.repeat(1000 + int(30_000)),
      '/api/v1/send?' + 'q='.repeat(1 + int(5000)),
      '/' + encodeURIComponent(randomUnicode(50)),
      '/%ff%fe',
    ])

  const fetchCase = (): FetchCase => {
    const r = int(100)
    const path = r < 85 ? pick(PATHS) : oddPath()
    let method = 'POST'
    if (r >= 78 && r < 85) method = pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE'])
    const headers: [string, string][] = [...authHeaders()]
    const ct = chance(0.9) ? 'application/json' : pick(CONTENT_TYPES)
    if (ct !== '' || chance(0.5)) headers.push(['content-type', ct])
    if (chance(0.05)) headers.push(['content-type', pick(CONTENT_TYPES)])
    if (chance(0.05)) headers.push(['x-request-id', pick(['spoofed', 'a'.repeat(3000), '00000000-0000-4000-8000-000000000000'])])
    if (chance(0.05))
      headers.push([
        pick(['x-forwarded-for', 'x-odd', 'accept', 'accept-encoding', 'expect']),
        pick(['127.0.0.1', 'gzip', 'x'.repeat(2000), '*/*', '100-continue']),
      ])
    if (chance(0.03)) for (let i = 0; i < 50 + int(50); i++) headers.push([`x-h${i}`, 'v'])
    const { label, body } = method === 'GET' || method === 'HEAD' || method === 'TRACE' ? { label: 'no body', body: undefined } : jsonBody(path)
    return { kind: 'fetch', label: `${method} ${label}`, method, path, headers, body }
  }

  const rawCase = (): RawCase => {
    const key = keys.active
    const body = JSON.stringify(plausible('/api/v1/verify'))
    const head = (extra = '') => `POST /api/v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${extra}`
    const r = int(22)
    const text = (label: string, s: string | Uint8Array): RawCase => ({ kind: 'raw', label, bytes: typeof s === 'string' ? enc.encode(s) : s })
    switch (r) {
      case 0:
        return text('garbage line', randomUnicode(1 + int(100)) + '\r\n\r\n')
      case 1:
        return text('bad version', `POST /api/v1/send HTTP/${pick(['9.9', '2.0', '1.2', '0.9', 'x'])}\r\nHost: x\r\n\r\n`)
      case 2:
        return text('lf only', head().replaceAll('\r\n', '\n') + `Content-Length: ${body.length}\n\n${body}`)
      case 3:
        return text('nul in header', head(`X-A: a\u0000b\r\n`) + `Content-Length: ${body.length}\r\n\r\n${body}`)
      case 4:
        return text('non-ascii header value', head(`X-A: ${randomUnicode(20)}\r\n`) + `Content-Length: ${enc.encode(body).length}\r\n\r\n${body}`)
      case 5:
        return text('duplicate content-length', head(`Content-Length: ${body.length}\r\n`) + `Content-Length: ${body.length + 1}\r\n\r\n${body}`)
      case 6:
        return text(
          'cl and te',
          head(`Content-Length: ${body.length}\r\n`) + `Transfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        )
      case 7:
        return text(
          'bad chunk size',
          head('Transfer-Encoding: chunked\r\n') + `\r\n${pick(['zz', '-1', 'fffffffffffffffff', ' 5', '5;ext', ''])}\r\n${body}\r\n0\r\n\r\n`,
        )
      case 8:
        return text('chunked over 16 KiB', head('Transfer-Encoding: chunked\r\n') + '\r\n' + `4000\r\n${'x'.repeat(0x4000)}\r\n`.repeat(2) + '0\r\n\r\n')
      case 9:
        return text('truncated body', head(`Content-Length: ${body.length + 1 + int(100)}\r\n`) + '\r\n' + body.slice(0, int(body.length)))
      case 10:
        return text('short content-length', head(`Content-Length: ${int(body.length)}\r\n`) + '\r\n' + body)
      case 11:
        return text('negative content-length', head('Content-Length: -5\r\n') + '\r\n' + body)
      case 12:
        return text('huge content-length', head(`Content-Length: ${pick(['99999999999999999999', '1e6', '0x10', '16385'])}\r\n`) + '\r\n' + body)
      case 13:
        return text('pipelined', (head(`Content-Length: ${body.length}\r\n`) + '\r\n' + body).repeat(2 + int(5)))
      case 14:
        return text('http/1.0', head().replace('HTTP/1.1', 'HTTP/1.0') + `Content-Length: ${body.length}\r\n\r\n${body}`)
      case 15:
        return text('obs-fold', head('X-Folded: a\r\n  b\r\n') + `Content-Length: ${body.length}\r\n\r\n${body}`)
      case 16:
        return text('header without colon', head('NoColonHere\r\n') + `Content-Length: ${body.length}\r\n\r\n${body}`)
      case 17:
        return text('huge header', head(`X-Big: ${'a'.repeat(10_000 + int(100_000))}\r\n`) + `Content-Length: ${body.length}\r\n\r\n${body}`)
      case 18:
        return text('long url', `GET /api/v1/${'a'.repeat(1000 + int(100_000))} HTTP/1.1\r\nHost: x\r\n\r\n`)
      case 19:
        return text('odd method', `${pick(['FOO', 'post', 'CONNECT', 'PRI', 'G\u0000T', 'PROPFIND'])} /api/v1/send HTTP/1.1\r\nHost: x\r\n\r\n`)
      case 20:
        return text(
          'no host',
          `POST /api/v1/verify HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        )
      default:
        return text('cr without lf', head('X-A: a\rb\r\n') + `Content-Length: ${body.length}\r\n\r\n${body}`)
    }
  }

  /** 1 in 10 cases is raw bytes over TCP; the rest go through fetch. */
  return (): FuzzCase => (chance(0.1) ? rawCase() : fetchCase())
}
