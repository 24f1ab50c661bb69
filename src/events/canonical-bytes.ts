/**
 * Canonical form (RFC 8785, as {@link isCanonicalText} decides it) read off a JSON text's UTF-8
 * bytes, without serialising anything: verify asks it of every line's data, and JSON.stringify of
 * the parsed data and the comparison with the text were the largest part of a line's checks on the
 * worker (~1.8 µs of ~4 µs a line of a log of notes).
 *
 * A text JSON.parse accepted is canonical exactly when, outside strings, it has no whitespace;
 * every string has only the escapes JSON.stringify writes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`,
 * `\t`, and `\u00xx` in lowercase for the other control characters; any other escape stands for a
 * character JSON.stringify writes as itself, or for a lone surrogate, which canonical JSON refuses);
 * every number is written as ECMAScript writes its value (finite, no `-0`); and every object's
 * member names rise strictly in UTF-16 code units (no name twice: JSON.parse would keep the last).
 * A name with an escape or a byte over 0x7F is left undecided (UTF-8 order is not UTF-16 order past
 * the BMP's surrogates), and so is a text nested deeper than the bounds allow: the caller decides
 * those by serialising, as before. Pure.
 */

/** The text is canonical. */
export const CANONICAL = 1
/** The text is not canonical. */
export const NOT_CANONICAL = 0
/** Not decided here: serialise to decide. */
export const UNDECIDED = -1

/** Deepest nesting decided here (the bounds allow 64 levels). */
const MAX_LEVELS = 66

/** Per open object: where its last member name starts and ends (-1: none yet). */
const lastName = new Int32Array(2 * MAX_LEVELS)
/** Per open container: 1 for an object, 0 for an array. */
const isObject = new Uint8Array(MAX_LEVELS)

/** Bytes after a backslash that JSON.stringify writes as such (`"`, `\`, b, f, n, r, t). */
const SHORT_ESCAPE = new Uint8Array(256)
for (const c of '"\\bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1

/** Control characters JSON.stringify writes as `\u00xx` (those without a short escape). */
const HEX_ESCAPED = new Uint8Array(32).fill(1)
for (const c of [8, 9, 10, 12, 13]) HEX_ESCAPED[c] = 0

/** Whether the four bytes at `p` are `00` and two lowercase hex digits naming a character in HEX_ESCAPED. */
const isHexEscape = (b: Uint8Array, p: number): boolean => {
  if (b[p] !== 48 || b[p + 1] !== 48) return false
  const hi = b[p + 2] as number
  const lo = b[p + 3] as number
  if (hi !== 48 && hi !== 49) return false
  const low = lo >= 48 && lo <= 57 ? lo - 48 : lo >= 97 && lo <= 102 ? lo - 87 : -1
  return low >= 0 && HEX_ESCAPED[(hi - 48) * 16 + low] === 1
}

/** Whether a number's bytes `b[p, e)` are what ECMAScript writes for its value. */
const isCanonicalNumber = (b: Uint8Array, p: number, e: number): boolean => {
  // The usual case: an integer of up to 15 digits without a leading zero (not -0), written as it is.
  let i = b[p] === 45 ? p + 1 : p
  const first = b[i] as number
  if (e - i <= 15 && first >= 49 && first <= 57) {
    for (i++; i < e; i++) {
      const c = b[i] as number
      if (c < 48 || c > 57) break
    }
    if (i === e) return true
  } else if (e === p + 1 && first === 48) return true
  let s = ''
  for (let k = p; k < e; k++) s += String.fromCharCode(b[k] as number)
  const n = Number(s)
  return Number.isFinite(n) && String(n) === s
}

/** Whether the name `b[s, e)` is all ASCII. */
const isAsciiName = (b: Uint8Array, s: number, e: number): boolean => {
  for (let k = s; k < e; k++) if ((b[k] as number) > 0x7f) return false
  return true
}

/** Whether the ASCII name `b[s, e)` is after the name `b[ps, pe)` in code-unit order. */
const nameAfter = (b: Uint8Array, s: number, e: number, ps: number, pe: number): boolean => {
  const n = Math.min(e - s, pe - ps)
  for (let k = 0; k < n; k++) {
    const x = b[s + k] as number
    const y = b[ps + k] as number
    if (x !== y) return x > y
  }
  return e - s > pe - ps
}

/**
 * Whether `b[start, end)`, a JSON text that JSON.parse accepts and valid UTF-8, is in canonical
 * form: CANONICAL, NOT_CANONICAL, or UNDECIDED (see the module's comment).
 */
export const canonicalBytes = (b: Uint8Array, start: number, end: number): number => {
  let depth = -1
  /** A string read next is a member's name. */
  let name = false
  let p = start
  while (p < end) {
    const c = b[p] as number
    if (c === 34) {
      // A string: up to its closing quote, its escapes checked.
      const s = ++p
      let plain = true
      for (;;) {
        // Most of a text is in strings without escapes: skip to the next quote or backslash.
        for (; p + 4 <= end; p += 4) {
          const w =
            (b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16) | ((b[p + 3] as number) << 24)
          // A byte of w that is a quote (0x22) or a backslash (0x5c) becomes 0 in x or y.
          const x = w ^ 0x22222222
          const y = w ^ 0x5c5c5c5c
          if ((((x - 0x01010101) & ~x) | ((y - 0x01010101) & ~y)) & 0x80808080) break
        }
        for (; p < end; p++) {
          const d = b[p] as number
          if (d === 34 || d === 92) break
        }
        // A text cut short (not what JSON.parse accepted): decided by serialising.
        if (p >= end) return UNDECIDED
        if (b[p] === 34) break
        plain = false
        const x = b[p + 1] as number
        if (SHORT_ESCAPE[x] === 1) p += 2
        else if (x === 117 && isHexEscape(b, p + 2)) p += 6
        else return NOT_CANONICAL
      }
      if (name) {
        if (!plain || !isAsciiName(b, s, p)) return UNDECIDED
        const ps = lastName[2 * depth] as number
        if (ps >= 0 && !nameAfter(b, s, p, ps, lastName[2 * depth + 1] as number)) return NOT_CANONICAL
        lastName[2 * depth] = s
        lastName[2 * depth + 1] = p
        name = false
      }
      p++
    } else if (c === 123 || c === 91) {
      if (++depth >= MAX_LEVELS) return UNDECIDED
      const object = c === 123
      isObject[depth] = object ? 1 : 0
      lastName[2 * depth] = -1
      name = object
      p++
    } else if (c === 125 || c === 93) {
      depth--
      p++
    } else if (c === 44) {
      name = isObject[depth] === 1
      p++
    } else if (c === 58) p++
    else if (c === 45 || (c >= 48 && c <= 57)) {
      const s = p
      for (p++; p < end; p++) {
        const d = b[p] as number
        if (!((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45)) break
      }
      if (!isCanonicalNumber(b, s, p)) return NOT_CANONICAL
    } else if (c === 116 || c === 110) p += 4
    else if (c === 102) p += 5
    else return NOT_CANONICAL // whitespace (nothing else is valid here)
  }
  return CANONICAL
}
