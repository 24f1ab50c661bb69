/**
 * The generated row readers (src/adapters/db/row-reader.ts) against the loop they unroll, on
 * random rows: the same converted rows, the same size bounds, and the bounds hold the exact JSON
 * size (the lower one within a byte per row). Hostile column names are refused; without code
 * generation the loop answers.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { loopReader, rowReader, type Converter, type RowBytes } from '../../src/adapters/db/row-reader.js'
import { columnConverter } from '../../src/adapters/db/values.js'
import { fcOptions } from '../helpers/seed.js'

const s = suite('row readers')

const TYPES = ['int', 'varchar', 'decimal', 'datetime', 'blob', 'float', 'bigint'] as const

const value = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('2024-01-02 03:04:05', '1.50', '"\\\n\u0001'),
  fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b))
)

const table = fc
  .uniqueArray(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/), { minLength: 1, maxLength: 8 })
  .chain((columns) =>
    fc.record({
      columns: fc.constant(columns),
      types: fc.array(fc.constantFrom(...TYPES), { minLength: columns.length, maxLength: columns.length }),
      converted: fc.array(fc.boolean(), { minLength: columns.length, maxLength: columns.length }),
      rows: fc.array(fc.array(value, { minLength: columns.length, maxLength: columns.length }), { maxLength: 6 })
    })
  )

s('a generated reader converts and counts as the loop does; the bounds hold the exact size', () => {
  fc.assert(
    fc.property(table, ({ columns, types, converted, rows }) => {
      // A column without a converter holds what the driver gives as exact JSON already.
      const converters: Array<Converter | null> = columns.map((_, i) =>
        converted[i] ? columnConverter(types[i] ?? 'int') : null
      )
      const exactAlready = (v: unknown): unknown => (typeof v === 'string' || typeof v === 'number' ? v : null)
      const raw = rows.map((r) =>
        Object.fromEntries(columns.map((c, i) => [c, converted[i] ? r[i] : exactAlready(r[i])]))
      )
      const take = (reader: ReturnType<typeof loopReader>): { rows: unknown[]; sizes: RowBytes } => {
        const sizes = { lower: 2, upper: 2 }
        const taken = raw.map((r) => reader(structuredClone(r), converters, sizes, true))
        return { rows: taken, sizes }
      }
      const generated = take(rowReader(columns, converted))
      const loop = take(loopReader(columns))
      assert.equal(generated, loop)
      const exact = Buffer.byteLength(JSON.stringify(generated.rows))
      // The lower bound counts a comma after every member and row, the last ones too: it may exceed
      // the size by one byte per row (and one more), as it always has (where reading stops is kept).
      assert.ok(generated.sizes.lower <= exact + raw.length + 1, `lower ${generated.sizes.lower} > ${exact}`)
      assert.ok(exact <= generated.sizes.upper, `upper ${generated.sizes.upper} < ${exact}`)
    }),
    fcOptions(300)
  )
})

s('rows not counted add to the lower bound only', () => {
  const read = rowReader(['a', 'b'], [false, false])
  const sizes = { lower: 2, upper: 2 }
  read({ a: 'xy', b: 1 }, [null, null], sizes, true)
  const after = { ...sizes }
  read({ a: 'xyz', b: null }, [null, null], sizes, false)
  assert.is(sizes.upper, after.upper)
  assert.ok(sizes.lower > after.lower)
})

s('a column name that is not an identifier is refused before any code exists', () => {
  for (const bad of ['a"]; process.exit(1); //', 'a b', '1a', '', 'x'.repeat(65), 'é'])
    assert.throws(() => rowReader([bad], [false]), /not an identifier/)
})

s('without code generation the loop reads the rows', () => {
  const module = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src/adapters/db/row-reader.js')
  const script = `const { rowReader } = await import(${JSON.stringify(module)})
const sizes = { lower: 2, upper: 2 }
const row = rowReader(['a', 'b'], [true, false])({ a: 1, b: 'xy' }, [(v) => String(v), null], sizes, true)
console.log(JSON.stringify({ row, sizes }))`
  const r = spawnSync(
    process.execPath,
    ['--disallow-code-generation-from-strings', '--input-type=module', '-e', script],
    {
      encoding: 'utf8'
    }
  )
  assert.is(r.status, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout), {
    row: { a: '1', b: 'xy' },
    sizes: { lower: 2 + 3 + 5 + 5 + 1 + 2, upper: 2 + 3 + 5 + 5 + 6 + 2 + 12 + 2 }
  })
})

s.run()
