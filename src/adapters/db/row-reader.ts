/**
 * Taking the driver's rows of one statement: each row's values converted in place to exact JSON
 * (where its column needs it) and the bounds of its JSON size counted, in one pass.
 *
 * The lower bound: every UTF-16 unit of a string is at least one byte, every key is quoted and
 * followed by a colon, values and members are separated (a comma counted after every member and
 * row, the last ones too, so it may be a byte per row over); enough to know the rows read already
 * exceed a limit. The upper bound: keys are validated ASCII identifiers, a string takes at most 6
 * bytes per UTF-16 unit (a \u escape) plus quotes, a number at most 24 characters; when it fits the
 * result limit, no row needs serialising to be measured.
 *
 * Reading a row's members by a name held in a variable is a lookup V8 cannot specialise (every
 * column a different name at one place in the code): for 1,000 rows of 12 columns it took longer
 * than the rest of the library's work on the query (bench/db-rows). So the reader of a column list
 * is generated once, reading each member by its name written out, as mysql2 generates its row
 * parsers. The names are the plan's validated identifiers, checked again here, and written as JSON
 * string literals; where code cannot be generated (node --disallow-code-generation-from-strings),
 * the same reader runs as a loop.
 */
import { IDENTIFIER_PATTERN } from '../../domain/identifiers.js'
import type { JsonValue } from './values.js'

export type Row = Readonly<Record<string, JsonValue>>

/** Converts one driver value of a column to exact JSON. */
export type Converter = (v: unknown) => JsonValue

/** Bounds of the JSON size of the rows taken so far. */
export interface RowBytes {
  /** A lower bound of the JSON array of all rows taken. */
  lower: number
  /** An upper bound of the JSON array of the rows taken with `counted`. */
  upper: number
}

/**
 * Takes one driver row: converts it in place (the driver's row objects are ours) with the
 * column's converter (null: the driver's value is exact JSON already), adds its bounds to `sizes`
 * (its upper bound only when `counted`) and returns it.
 */
export type RowReader = (
  row: Record<string, unknown>,
  converters: ReadonlyArray<Converter | null>,
  sizes: RowBytes,
  counted: boolean
) => Row

/** 3: the braces and the comma after the row; 4 per member: the key's quotes, the colon, a comma. */
const fixedBytes = (columns: readonly string[]): number => columns.reduce((n, c) => n + c.length + 4, 3)

/** The reader as a loop over the columns (the reference for the generated one). */
export const loopReader = (columns: readonly string[]): RowReader => {
  const fixed = fixedBytes(columns)
  return (row, converters, sizes, counted) => {
    let lower = fixed
    let upper = fixed
    for (let i = 0; i < columns.length; i++) {
      const key = columns[i] as string
      const convert = converters[i]
      if (convert != null) row[key] = convert(row[key])
      const v = row[key] as JsonValue
      if (typeof v === 'string') {
        lower += v.length
        upper += v.length * 6 + 2
      } else if (typeof v === 'object' && v !== null) {
        lower += v.$base64.length + 13
        upper += v.$base64.length + 14
      } else {
        lower += 1
        upper += 24
      }
    }
    sizes.lower += lower
    if (counted) sizes.upper += upper
    return row as Row
  }
}

/** The generated reader's source: the loop above, unrolled, one member name written out per column. */
const readerSource = (columns: readonly string[], converted: readonly boolean[]): string => {
  const members = columns.map((c, i) => {
    const name = JSON.stringify(c)
    const read = converted[i] ? `v = row[${name}] = converters[${i}](row[${name}])` : `v = row[${name}]`
    return `${read}
  if (typeof v === 'string') { lower += v.length; upper += v.length * 6 + 2 }
  else if (typeof v === 'object' && v !== null) { lower += v.$base64.length + 13; upper += v.$base64.length + 14 }
  else { lower += 1; upper += 24 }`
  })
  const fixed = fixedBytes(columns)
  return `'use strict'
return function readRow(row, converters, sizes, counted) {
  let lower = ${fixed}
  let upper = ${fixed}
  let v
  ${members.join('\n  ')}
  sizes.lower += lower
  if (counted) sizes.upper += upper
  return row
}`
}

/** Generated readers by column list (a session asks the same shapes again and again). */
const generated = new Map<string, RowReader>()
const MAX_GENERATED = 256

/**
 * The reader of rows with these columns, `converted[i]` telling whether column i has a converter.
 * Throws on a column name that is not a validated identifier (the plan only holds those).
 */
export const rowReader = (columns: readonly string[], converted: readonly boolean[]): RowReader => {
  for (const c of columns)
    if (!IDENTIFIER_PATTERN.test(c)) throw new TypeError('row reader: column is not an identifier')
  const key = JSON.stringify([columns, converted])
  const known = generated.get(key)
  if (known !== undefined) return known
  let reader: RowReader
  try {
    reader = new Function(readerSource(columns, converted))() as RowReader
  } catch {
    // Code generation is disallowed: the same reader as a loop.
    return loopReader(columns)
  }
  if (generated.size >= MAX_GENERATED) generated.clear()
  generated.set(key, reader)
  return reader
}
