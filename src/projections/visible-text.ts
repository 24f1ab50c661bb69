/**
 * Text from a case (a model's answer, a note, a capture, a file name) shown to a person, in the
 * HTML report or on a terminal, must show what it holds: a character that renders as nothing or
 * acts instead of showing (a zero-width space, a bidi override, a tag character, ESC, BEL, BS) is
 * replaced by a visible code such as `<U+202E>`, never obeyed. The set is Unicode's own, not a hand
 * list: Default_Ignorable_Code_Point, the format characters (Cf) and the C0/C1 controls (Cc).
 */

/** Every character that is default-ignorable, a format character or a control. */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}]/gu

/** `U+XXXX` (at least four hex digits) of the first code point of `c`. */
export const codePointLabel = (c: string): string =>
  `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`

export interface ShowInvisibleOptions {
  /** How a code is shown (default `<U+XXXX>`); the HTML report wraps it in markup. */
  readonly mark?: (label: string) => string
  /** Characters left as they are (the report keeps line breaks and tabs in preformatted text). */
  readonly keep?: string
}

/**
 * Replaces every invisible character of `text` (see the module comment) by a visible code. The one
 * function both the HTML report and the CLI use.
 *
 * @example
 * showInvisible('ok\u202Egnp.exe') // 'ok<U+202E>gnp.exe'
 * showInvisible('a\u001b[2Jb')     // 'a<U+001B>[2Jb'
 */
export const showInvisible = (text: string, options: ShowInvisibleOptions = {}): string => {
  const mark = options.mark ?? ((label: string) => `<${label}>`)
  const keep = options.keep ?? ''
  return text.replace(INVISIBLE, (c) => (keep.includes(c) ? c : mark(codePointLabel(c))))
}

/**
 * Shows every invisible character of a JSON text (see the module comment) as its JSON escape
 * (`\u202E`; a character beyond the BMP as its two escaped halves), so that it is seen and the
 * text still parses to the same value. JSON whitespace (LF, CR, tab) is left as it is: inside a
 * string JSON has it escaped already.
 *
 * @example
 * showInvisibleJson('{"a":"ok\u202Egnp"}') // '{"a":"ok\\u202Egnp"}', which parses to the same value
 */
export const showInvisibleJson = (json: string): string =>
  json.replace(INVISIBLE, (c) =>
    '\n\r\t'.includes(c)
      ? c
      : Array.from(
          { length: c.length },
          (_, i) => `\\u${c.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`
        ).join('')
  )
