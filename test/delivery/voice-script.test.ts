/** What a call says (src/delivery/voice-script.ts): the text cut around the code, and each vendor's language for a BCP 47 tag. */
import { expect, test } from 'bun:test'
import { voiceLanguage, voiceParts, type VoicePart } from '../../src/delivery/voice-script.ts'

const code = (s: string): VoicePart => ({ kind: 'code', digits: s.split('') })
const words = (text: string): VoicePart => ({ kind: 'words', text })

test('the code is found in its spoken form or as plain digits, every time it occurs; the words around it are kept as written', () => {
  expect(voiceParts('Your verification code is: 1, 2, 3, 4, 5, 6', '123456')).toEqual([words('Your verification code is:'), code('123456')])
  expect(voiceParts('7, 7, 0, 1 is your code. Again: 7701.', '7701')).toEqual([code('7701'), words('is your code. Again:'), code('7701'), words('.')])
  expect(voiceParts('Código\n4321\nno lo compartas', '4321')).toEqual([words('Código'), code('4321'), words('no lo compartas')])
})

test('digits that only contain the code are not the code; without the code in the text the words are said alone', () => {
  expect(voiceParts('Ref 143210 / code 4321', '4321')).toEqual([words('Ref 143210 / code'), code('4321')])
  expect(voiceParts('This is a test call from otpd.', '')).toEqual([words('This is a test call from otpd.')])
  expect(voiceParts('No code here', '9999')).toEqual([words('No code here')])
  expect(voiceParts('', '9999')).toEqual([])
})

test.each([
  ['en', 'en-US', 'en-US'],
  ['EN-gb', 'en-GB', 'en-GB'],
  ['en-ZA', 'en-US', 'en-ZA'], // Twilio lacks en-ZA here: the language alone
  ['en-NZ', 'en-US', 'en-US'],
  ['es', 'es-ES', 'es-ES'],
  ['es-419', 'es-MX', 'es-MX'],
  ['pt', 'pt-PT', 'pt-PT'],
  ['pt-BR', 'pt-BR', 'pt-BR'],
  ['zh', 'cmn-CN', 'cmn-CN'],
  ['zh-Hans-CN', 'cmn-CN', 'cmn-CN'],
  ['zh-Hant', 'cmn-TW', 'cmn-TW'],
  ['zh-Hant-TW', 'cmn-TW', 'cmn-TW'],
  ['zh-HK', 'yue-HK', 'yue-CN'],
  ['ar', 'ar-XA', 'ar'],
  ['ar-EG', 'ar-XA', 'ar'],
  ['no', 'nb-NO', 'nb-NO'],
  ['ms', 'ms-MY', undefined], // Vonage lacks Malay: its default voice
  ['sw', undefined, undefined],
  ['__proto__', undefined, undefined],
  ['constructor', undefined, undefined],
])('%s: Twilio %s, Vonage %s', (tag, twilio, vonage) => {
  expect(voiceLanguage(tag, 'twilio')).toBe(twilio)
  expect(voiceLanguage(tag, 'vonage')).toBe(vonage)
})
