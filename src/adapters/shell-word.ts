/**
 * Words a POSIX shell reads back as they are shown: the paths in the commands vba suggests (the
 * CLI's `next:` lines, and messages of the library that name a command to run). Pure.
 */

/** Characters a terminal would not show as themselves (terminalText's set: controls, format, default-ignorable). */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}]/u

/** The escapes of `$'…'` by name; any other invisible byte is three octal digits (never read into the next character). */
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' }

/**
 * A word as a POSIX shell reads it back: as it is when it is plain, else in single quotes; a word
 * holding a control or another invisible character in `$'…'` quotes (POSIX.1-2024, bash, zsh, ksh),
 * that character as `\n`, `\t`, `\r` or its UTF-8 bytes in octal (`\033`). The result is printable ASCII wherever the word was
 * invisible, so terminalText, applied to the whole line afterwards, leaves it as it is.
 */
export const shellWord = (s: string): string => {
  if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(s)) return s
  if (!INVISIBLE.test(s)) return `'${s.replace(/'/g, `'\\''`)}'`
  const escaped = Array.from(s, (c) =>
    c === '\\' || c === "'"
      ? `\\${c}`
      : INVISIBLE.test(c)
        ? (NAMED[c] ?? Array.from(Buffer.from(c, 'utf8'), (b) => `\\${b.toString(8).padStart(3, '0')}`).join(''))
        : c
  ).join('')
  return `$'${escaped}'`
}

/** A directory as a shell word that is never read as an option: `-x` is written `./-x`. */
export const shellPath = (dir: string): string => shellWord(dir.startsWith('-') ? `./${dir}` : dir)
