/**
 * Looks for secrets in files and logs (docs/reliability.md): each secret in clear,
 * and the secret part of an API key (after its display prefix) in 12-character
 * windows, so a key stored in pieces or truncated would still be found. The
 * server secret and provider secrets are also looked for hex- and base64-encoded.
 */
export interface Secret {
  kind: 'api key' | 'code' | 'server secret' | 'provider secret'
  value: string
}

export interface Haystack {
  name: string
  bytes: Uint8Array
}

export interface Hit {
  where: string
  kind: Secret['kind']
  needle: string
}

function needles(s: Secret): string[] {
  switch (s.kind) {
    case 'api key': {
      const body = s.value.slice('otpd_'.length + 8) // the display prefix is kept in clear by design
      const out = [s.value]
      for (let i = 0; i + 12 <= body.length; i += 6) out.push(body.slice(i, i + 12))
      return out
    }
    case 'code':
      return [s.value]
    default:
      return [s.value, Buffer.from(s.value).toString('hex'), Buffer.from(s.value).toString('base64').replace(/=+$/, '')]
  }
}

export function scan(haystacks: Haystack[], secrets: Secret[]): Hit[] {
  const hits: Hit[] = []
  for (const h of haystacks) {
    // latin1 keeps every byte as one char, so byte offsets and ASCII needles line up.
    const text = Buffer.from(h.bytes).toString('latin1')
    for (const s of secrets) {
      for (const n of needles(s)) {
        if (text.includes(n)) {
          hits.push({ where: h.name, kind: s.kind, needle: n.length > 16 ? n.slice(0, 6) + '...' : n })
          break
        }
      }
    }
  }
  return hits
}
