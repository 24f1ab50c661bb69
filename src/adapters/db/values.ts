/**
 * Row values as JSON, exactly: DECIMAL and BIGINT as strings (never rounded through a double),
 * dates as ISO 8601 text, binary as base64 under a `$base64` marker, NULL as null.
 */

export type JsonValue = null | boolean | number | string | { readonly $base64: string }

const EXACT = new Set(['bigint', 'decimal', 'numeric'])
const DATES = new Set(['date', 'datetime', 'timestamp', 'time', 'year'])

/** Lower-case base type of a SQLite declared type, using MySQL's names where they apply. */
export const sqliteDataType = (declared: string): string => {
  const d = declared.toUpperCase()
  if (d.includes('BIGINT')) return 'bigint'
  if (d.includes('DECIMAL') || d.includes('NUMERIC')) return 'decimal'
  if (d.includes('INT'))
    return /TINYINT/.test(d) ? 'tinyint' : /SMALLINT/.test(d) ? 'smallint' : /MEDIUMINT/.test(d) ? 'mediumint' : 'int'
  if (d.includes('BINARY') || d.includes('BLOB') || d === '') return d.includes('BINARY') ? 'varbinary' : 'blob'
  if (d.includes('CHAR')) return 'varchar'
  if (d.includes('TEXT') || d.includes('CLOB')) return 'text'
  if (d.includes('REAL') || d.includes('FLOA') || d.includes('DOUB')) return d.includes('DOUB') ? 'double' : 'float'
  if (d.includes('DATETIME') || d.includes('TIMESTAMP')) return 'datetime'
  if (d.includes('DATE')) return 'date'
  return d.toLowerCase().split(/[ (]/)[0] ?? 'unknown'
}

/** Converts one driver value of a column with MySQL base type `dataType` to exact JSON. */
export const toJsonValue = (dataType: string, v: unknown): JsonValue => {
  if (v === null || v === undefined) return null
  if (v instanceof Uint8Array) return { $base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') }
  if (typeof v === 'bigint')
    return EXACT.has(dataType) || v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)
      ? v.toString()
      : Number(v)
  if (typeof v === 'number') return EXACT.has(dataType) || !Number.isFinite(v) ? String(v) : v
  if (typeof v === 'boolean') return v
  if (v instanceof Date) return v.toISOString()
  if (typeof v === 'string') {
    if (DATES.has(dataType) && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(v)) return v.replace(' ', 'T')
    return v
  }
  return String(v)
}

/**
 * A converter for one column, specialised once per query: most driver values are already exact
 * JSON (numbers of INT columns, strings of text, DECIMAL and BIGINT columns), so only date columns
 * and non-primitive values (binary buffers, bigint, Date) go through {@link toJsonValue}.
 */
export const columnConverter = (dataType: string): ((v: unknown) => JsonValue) => {
  const exact = EXACT.has(dataType)
  if (DATES.has(dataType)) return (v) => toJsonValue(dataType, v)
  return (v) => {
    if (v === null || v === undefined) return null
    if (typeof v === 'string') return v
    if (typeof v === 'number' && !exact && Number.isFinite(v)) return v
    return toJsonValue(dataType, v)
  }
}
