/** SMS encoding, segments and transliteration (docs/messages.md#encoding-and-segments). */
import { describe, expect, test } from 'bun:test'
import { gsmLookAlike, isGsmChar, nonGsmChars, smsSize, transliterate } from '../../src/lib/sms-encoding.ts'

describe('smsSize', () => {
  test('GSM-7: 160 characters are one segment, 161 are two of 153', () => {
    expect(smsSize('a'.repeat(160))).toEqual({ encoding: 'GSM-7', units: 160, segments: 1 })
    expect(smsSize('a'.repeat(161))).toEqual({ encoding: 'GSM-7', units: 161, segments: 2 })
    expect(smsSize('a'.repeat(306))).toEqual({ encoding: 'GSM-7', units: 306, segments: 2 })
    expect(smsSize('a'.repeat(307))).toEqual({ encoding: 'GSM-7', units: 307, segments: 3 })
  })

  test('the extension table counts two septets and is never cut between parts', () => {
    expect(smsSize('€'.repeat(80))).toEqual({ encoding: 'GSM-7', units: 160, segments: 1 })
    expect(smsSize('[]{}^~|\\\f€')).toMatchObject({ encoding: 'GSM-7', units: 20 })
    // 152 septets, then a two-septet character that does not fit the first part's 153.
    expect(smsSize('a'.repeat(152) + '€' + 'a'.repeat(8))).toEqual({ encoding: 'GSM-7', units: 162, segments: 2 })
    expect(smsSize('a'.repeat(152) + '€'.repeat(77))).toMatchObject({ segments: 3 })
  })

  test('the GSM-7 letters with accents stay GSM-7; one ó makes the whole text UCS-2', () => {
    expect(smsSize('èéùìòÇØøÅåÆæßÉÄÖÑÜäöñüà§¿¡£¥ΔΦΓΛΩΠΨΣΘΞ@$_')).toMatchObject({ encoding: 'GSM-7' })
    expect(smsSize('Tu código')).toEqual({ encoding: 'UCS-2', units: 9, segments: 1 })
  })

  test('UCS-2: 70 units are one segment, 71 are two of 67; a surrogate pair is never cut', () => {
    expect(smsSize('ж'.repeat(70))).toEqual({ encoding: 'UCS-2', units: 70, segments: 1 })
    expect(smsSize('ж'.repeat(71))).toEqual({ encoding: 'UCS-2', units: 71, segments: 2 })
    expect(smsSize('ж'.repeat(134))).toEqual({ encoding: 'UCS-2', units: 134, segments: 2 })
    expect(smsSize('ж'.repeat(135))).toEqual({ encoding: 'UCS-2', units: 135, segments: 3 })
    // 66 units, then an emoji (2 units) that does not fit the first part's 67.
    expect(smsSize('ж'.repeat(66) + '😀' + 'ж'.repeat(3))).toEqual({ encoding: 'UCS-2', units: 71, segments: 2 })
  })

  test("the case that costs: one 'ó' turns a 100-character text from 1 segment into 2", () => {
    const text = 'Su codigo de verificacion para acceder a su cuenta en linea es 12345678. No lo comparta con nadie.'
    expect(smsSize(text).segments).toBe(1)
    expect(smsSize(text.replace('codigo', 'código'))).toMatchObject({ encoding: 'UCS-2', segments: 2 })
  })
})

describe('transliterate', () => {
  test('characters with a GSM-7 look-alike become it; GSM-7 letters and others stay', () => {
    expect(transliterate('Tu código, ¿está ahí? Ação łódź “x” – ok…')).toBe('Tu codigo, ¿esta ahi? Acao lodz "x" - ok...')
    expect(transliterate('é è ñ ü Ö Ç')).toBe('é è ñ ü Ö Ç')
    expect(transliterate('Ο κωδικός σας')).toBe('O KΩΔIKOΣ ΣAΣ')
    expect(transliterate('код 認証')).toBe('код 認証')
  })

  test('a transliterated text with only look-alikes is GSM-7', () => {
    for (const s of ['Tu código', 'Váš ověřovací kód', 'Doğrulama kodunuz', 'Ο κωδικός σας']) expect(smsSize(transliterate(s)).encoding).toBe('GSM-7')
  })

  test('nonGsmChars lists each forcing character once; look-alikes exist only outside GSM-7', () => {
    expect(nonGsmChars('código ó ñ')).toEqual(['ó'])
    expect(gsmLookAlike('ó')).toBe('o')
    expect(gsmLookAlike('ж')).toBeUndefined()
    expect(isGsmChar('é')).toBe(true)
    expect(isGsmChar('ó')).toBe(false)
  })
})
