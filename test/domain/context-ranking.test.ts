/** Ranking before cutting: source.context's allocation of context windows (pure). */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { allocateContext, type ContextPlace } from '../../src/domain/context-ranking.js'

const limits = { context_lines: 8, max_files: 8, max_blocks: 12, max_total_lines: 160 }
const place = (role: ContextPlace['role'], path: string, line: number, fileRank = 0): ContextPlace => ({
  role,
  path,
  line,
  fileRank
})
const lines = (): number => 2000

const ranking = suite('allocateContext')

ranking('every direct hit gets its window before any follow-up gets a line, whatever the path order', () => {
  const places = [
    ...Array.from({ length: 9 }, (_, i) => place('alias', 'a/garr.cpp', 100 + i * 30)),
    place('loader', 'a/loader.cpp', 10),
    place('same_name', 'a/majordomo.cpp', 16),
    place('term', 'z/brewfest.cpp', 1039),
    place('term', 'a/garr.cpp', 18)
  ]
  const a = allocateContext(places, lines, { ...limits, max_total_lines: 40 })
  assert.equal(a.files.map((f) => f.path).slice(0, 2), ['a/garr.cpp', 'z/brewfest.cpp'])
  assert.equal(a.files.find((f) => f.path === 'z/brewfest.cpp')?.windows, [{ start: 1031, end: 1047 }])
  assert.is(a.noContext({ path: 'z/brewfest.cpp', line: 1039 }), undefined)
  assert.is(a.noContext({ path: 'a/loader.cpp', line: 10 }), 'lines')
  assert.ok(a.limitsReached.has('lines'))
})

ranking('a window that does not fit is narrowed around its place, which is always shown while a line is left', () => {
  const a = allocateContext([place('term', 'x.cpp', 500), place('term', 'y.cpp', 1039)], lines, {
    ...limits,
    max_total_lines: 20
  })
  assert.equal(
    a.files.map((f) => [f.path, f.windows]),
    [
      ['x.cpp', [{ start: 492, end: 508 }]],
      ['y.cpp', [{ start: 1038, end: 1040 }]]
    ]
  )
  assert.is(a.noContext({ path: 'y.cpp', line: 1039 }), undefined)
})

ranking(
  'loader lines and the same name elsewhere get one line each; registration functions the lines after them; code before dumps',
  () => {
    const a = allocateContext(
      [
        place('same_name', 'src/majordomo.cpp', 16),
        place('loader', 'src/loader.cpp', 9),
        place('loader', 'src/loader.cpp', 71),
        place('registration', 'src/garr.cpp', 51),
        place('term', 'data/sql/dump.sql', 3, 1),
        place('term', 'src/garr.cpp', 18)
      ],
      (p) => (p === 'src/garr.cpp' ? 55 : 2000),
      { ...limits, max_files: 3 }
    )
    assert.equal(
      a.files.map((f) => [f.path, f.windows]),
      [
        [
          'src/garr.cpp',
          [
            { start: 10, end: 26 },
            { start: 51, end: 55 }
          ]
        ],
        ['data/sql/dump.sql', [{ start: 1, end: 11 }]],
        [
          'src/loader.cpp',
          [
            { start: 9, end: 9 },
            { start: 71, end: 71 }
          ]
        ]
      ]
    )
    assert.is(a.noContext({ path: 'src/majordomo.cpp', line: 16 }), 'files')
  }
)

ranking('deterministic: the order places arrive in does not matter', () => {
  const places = [
    place('term', 'b.cpp', 40),
    place('alias', 'a.cpp', 300),
    place('term', 'a.cpp', 12),
    place('registration', 'a.cpp', 900),
    place('loader', 'l.cpp', 5)
  ]
  const x = allocateContext(places, lines, { ...limits, max_total_lines: 30 })
  const y = allocateContext([...places].reverse(), lines, { ...limits, max_total_lines: 30 })
  assert.equal(y.files, x.files)
})

ranking.run()
