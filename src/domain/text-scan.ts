/**
 * Lexical matching on text lines: literal case-sensitive search, whole-word search for
 * identifiers, and the simple-assignment and registration-function heuristics of source.context.
 * These are lexical facts about lines, not a parser: a hit proves neither a definition, nor a
 * registration, nor an executed call.
 */

export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** A valid identifier (searched as a whole word); anything else is a fixed string. */
export const isIdentifier = (s: string): boolean => IDENTIFIER.test(s) && s.length <= 200

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Identifiers assigned from `term` in a simple assignment on this line:
 * `NPC_WILD_WOLPERTINGER = 23487`, `const uint32 X = 23487;`, `X = 23487,` (enum), `#define X 23487`.
 */
export const assignedNames = (line: string, term: string): string[] => {
  const t = escapeRegExp(term)
  const boundary = isIdentifier(term) || /^\d/.test(term) ? '(?![A-Za-z0-9_])' : ''
  const names = new Set<string>()
  for (const re of [
    new RegExp(`\\b([A-Za-z_][A-Za-z0-9_]*)\\s*=\\s*${t}${boundary}`, 'g'),
    new RegExp(`#\\s*define\\s+([A-Za-z_][A-Za-z0-9_]*)\\s+${t}${boundary}`, 'g')
  ]) {
    for (const m of line.matchAll(re)) if (m[1] !== undefined && m[1] !== term) names.add(m[1])
  }
  return [...names]
}

/**
 * What `name` is assigned on this line in a simple assignment (`NAME = 21094,`, `#define NAME 5`),
 * trimmed; null when the line does not assign it.
 */
export const assignedValue = (line: string, name: string): string | null => {
  const n = escapeRegExp(name)
  const m =
    new RegExp(`(?<![A-Za-z0-9_])${n}\\s*=(?!=)\\s*([^,;{}]+)`).exec(line) ??
    new RegExp(`#\\s*define\\s+${n}\\s+(.+)$`).exec(line)
  const value = m?.[1]?.replace(/\/\/.*$|\/\*.*$/, '').trim() ?? ''
  return value === '' ? null : value.slice(0, 80)
}

/** Function names starting with one of `prefixes` that appear followed by `(` on this line. */
export const registrationNames = (line: string, prefixes: readonly string[]): string[] => {
  const names = new Set<string>()
  for (const p of prefixes) {
    if (!isIdentifier(p)) continue
    for (const m of line.matchAll(new RegExp(`\\b(${escapeRegExp(p)}[A-Za-z0-9_]*)\\s*\\(`, 'g')))
      if (m[1] !== undefined) names.add(m[1])
  }
  return [...names]
}

export interface CutLine {
  readonly text: string
  readonly cut: boolean
  readonly length: number
}

/** Cuts an over-long line to `max` characters, keeping its original length. */
export const cutLine = (text: string, max: number): CutLine =>
  text.length > max
    ? { text: text.slice(0, max), cut: true, length: text.length }
    : { text, cut: false, length: text.length }
