/**
 * SMS encoding and segments (docs/messages.md#encoding-and-segments): a text
 * goes as GSM-7 (3GPP TS 23.038, default alphabet and its extension table)
 * when every character is in it, else as UCS-2. A single message holds 160
 * GSM-7 septets or 70 UCS-2 units; a longer one is cut into parts of 153
 * septets or 67 units (the rest is the concatenation header). A character of
 * the extension table takes two septets and is never cut in two, nor is a
 * surrogate pair.
 *
 * One pass over the text and no allocation: it runs on every SMS send.
 */

export type SmsEncoding = 'GSM-7' | 'UCS-2'

export interface SmsSize {
  encoding: SmsEncoding
  /** Septets (GSM-7) or UTF-16 units (UCS-2). */
  units: number
  segments: number
}

const BASIC = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà'
const EXTENSION = '\f^{}\\[~]|€'

/** Septets per UTF-16 unit: 1 basic, 2 extension, 0 not in GSM-7. */
const SEPTETS = new Uint8Array(65536)
for (const c of BASIC) SEPTETS[c.charCodeAt(0)] = 1
for (const c of EXTENSION) SEPTETS[c.charCodeAt(0)] = 2

/** Whether `c` (one character) is in the GSM-7 alphabet or its extension table. */
export function isGsmChar(c: string): boolean {
  return c.length === 1 && SEPTETS[c.charCodeAt(0)]! > 0
}

/** The encoding a text needs, its length in that encoding and its segments. */
export function smsSize(text: string): SmsSize {
  // GSM-7 first: most texts are, and this pass also decides the encoding.
  let septets = 0
  let segments = 1
  let inSegment = 0
  for (let i = 0; i < text.length; i++) {
    const s = SEPTETS[text.charCodeAt(i)]!
    if (s === 0) return ucs2Size(text)
    septets += s
    if (inSegment + s > 153) {
      segments++
      inSegment = 0
    }
    inSegment += s
  }
  return { encoding: 'GSM-7', units: septets, segments: septets <= 160 ? 1 : segments }
}

function ucs2Size(text: string): SmsSize {
  const units = text.length
  if (units <= 70) return { encoding: 'UCS-2', units, segments: 1 }
  let segments = 1
  let inSegment = 0
  for (let i = 0; i < units; i++) {
    const code = text.charCodeAt(i)
    // A high surrogate starts a pair that stays in one part.
    const w = code >= 0xd800 && code <= 0xdbff && i + 1 < units ? 2 : 1
    if (inSegment + w > 67) {
      segments++
      inSegment = 0
    }
    inSegment += w
    i += w - 1
  }
  return { encoding: 'UCS-2', units, segments }
}

/**
 * GSM-7 look-alikes of characters outside it (`ó` -> `o`, Greek small
 * letters -> the capitals GSM-7 has or their Latin twins, typographic quotes
 * and dashes -> ASCII). A character with none is kept, and the text stays UCS-2.
 */
const LOOK_ALIKES: Record<string, string> = {
  ...pairs('áàâãāăą', 'a'),
  ...pairs('ÁÀÂÃĀĂĄ', 'A'),
  ...pairs('çćčĉċ', 'c'),
  ...pairs('ĆČĈĊ', 'C'),
  ...pairs('ďđ', 'd'),
  ...pairs('ĎĐ', 'D'),
  ...pairs('êëēėęěè', 'e'),
  ...pairs('ÈÊËĒĖĘĚ', 'E'),
  ...pairs('ğĝġģ', 'g'),
  ...pairs('ĞĜĠĢ', 'G'),
  ...pairs('íîïīįıĩ', 'i'),
  ...pairs('ÍÌÎÏĪĮİĨ', 'I'),
  ...pairs('ķ', 'k'),
  ...pairs('Ķ', 'K'),
  ...pairs('łľĺļ', 'l'),
  ...pairs('ŁĽĹĻ', 'L'),
  ...pairs('ńňņ', 'n'),
  ...pairs('ŃŇŅ', 'N'),
  ...pairs('óôõōőœ', 'o'),
  ...pairs('ÓÒÔÕŌŐŒ', 'O'),
  ...pairs('řŕ', 'r'),
  ...pairs('ŘŔ', 'R'),
  ...pairs('śšşșŝ', 's'),
  ...pairs('ŚŠŞȘŜ', 'S'),
  ...pairs('ťţț', 't'),
  ...pairs('ŤŢȚ', 'T'),
  ...pairs('úûūůűųũ', 'u'),
  ...pairs('ÚÙÛŪŮŰŲŨ', 'U'),
  ...pairs('ýÿ', 'y'),
  ...pairs('ÝŸ', 'Y'),
  ...pairs('źżž', 'z'),
  ...pairs('ŹŻŽ', 'Z'),
  ...pairs('‘’‚′', "'"),
  ...pairs('“”„″«»', '"'),
  ...pairs('‐‑‒–—―', '-'),
  ...pairs('\u00a0\u2007\u202f\u2009', ' '),
  '…': '...',
  // Greek: the capitals GSM-7 has, and Latin twins for the others.
  ...greek('ΑΆαά', 'A'),
  ...greek('Ββ', 'B'),
  ...greek('Γγ', 'Γ'),
  ...greek('Δδ', 'Δ'),
  ...greek('ΕΈεέ', 'E'),
  ...greek('Ζζ', 'Z'),
  ...greek('ΗΉηή', 'H'),
  ...greek('Θθ', 'Θ'),
  ...greek('ΙΊΪιίϊΐ', 'I'),
  ...greek('Κκ', 'K'),
  ...greek('Λλ', 'Λ'),
  ...greek('Μμ', 'M'),
  ...greek('Νν', 'N'),
  ...greek('Ξξ', 'Ξ'),
  ...greek('ΟΌοό', 'O'),
  ...greek('Ππ', 'Π'),
  ...greek('Ρρ', 'P'),
  ...greek('Σσς', 'Σ'),
  ...greek('Ττ', 'T'),
  ...greek('ΥΎΫυύϋΰ', 'Y'),
  ...greek('Φφ', 'Φ'),
  ...greek('Χχ', 'X'),
  ...greek('Ψψ', 'Ψ'),
  ...greek('ΩΏωώ', 'Ω'),
}

function pairs(from: string, to: string): Record<string, string> {
  return Object.fromEntries([...from].map((c) => [c, to]))
}
/** Greek letters map to themselves too when GSM-7 has them (Γ, Δ...): only the others are listed. */
function greek(from: string, to: string): Record<string, string> {
  return Object.fromEntries([...from].filter((c) => c !== to).map((c) => [c, to]))
}

/** The GSM-7 look-alike of one character outside GSM-7, if there is one. */
export function gsmLookAlike(c: string): string | undefined {
  return LOOK_ALIKES[c]
}

/** `text` with every character that has a GSM-7 look-alike replaced by it (the others kept). */
export function transliterate(text: string): string {
  let out = ''
  for (const c of text) out += isGsmChar(c) ? c : (LOOK_ALIKES[c] ?? c)
  return out
}

/** The distinct characters of `text` that force UCS-2, in order of appearance. */
export function nonGsmChars(text: string): string[] {
  const seen = new Set<string>()
  for (const c of text) if (!isGsmChar(c)) seen.add(c)
  return [...seen]
}
