import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { CommandIndex, IdSet } from '../../../src/adapters/case-store/id-table.js'
import { fcOptions } from '../../helpers/seed.js'

// These two have the same 32-bit FNV-1a hash: membership must still tell them apart.
const COLLIDING = ['evt-462789', 'evt-679192'] as const

const ids = suite('IdSet')

ids('holds exactly what was added, across growth of the table', () => {
  const s = new IdSet()
  for (let i = 0; i < 20_000; i += 2) assert.ok(s.insert(`evt-${i}`))
  assert.is(s.size, 10_000)
  for (let i = 0; i < 20_000; i++) assert.is(s.has(`evt-${i}`), i % 2 === 0, `evt-${i}`)
  assert.not.ok(s.has('evt-'))
  assert.not.ok(s.has('evt-00'))
  assert.not.ok(s.has(''))
})

ids('a repeated id is not added again', () => {
  const s = new IdSet().add('a').add('b')
  assert.not.ok(s.insert('a'))
  assert.is(s.add('b').size, 2)
})

ids('ids with the same hash are told apart by their characters', () => {
  const s = new IdSet()
  s.add(COLLIDING[0])
  assert.not.ok(s.has(COLLIDING[1]))
  assert.ok(s.insert(COLLIDING[1]))
  assert.ok(s.has(COLLIDING[0]) && s.has(COLLIDING[1]))
  assert.is(s.size, 2)
  assert.equal([...s], [...COLLIDING])
})

ids('a string that is no identifier is refused, and never a member', () => {
  const s = new IdSet()
  assert.throws(() => s.add('evt-\u2603'), /not an identifier/)
  assert.is(s.size, 0)
  assert.not.ok(s.has('evt-\u2603'))
  s.add('evt-')
  assert.not.ok(s.has('evt-\u2603'))
})

ids('property: inserts and lookups answer as a Set does, from any size ahead, across growth', () => {
  const key = fc.oneof(
    fc.stringMatching(/^[a-z0-9-]{1,12}$/),
    fc.constantFrom(...COLLIDING),
    fc.nat(3000).map((n) => `evt-${n}`)
  )
  fc.assert(
    fc.property(fc.nat(5000), fc.array(key, { maxLength: 4000 }), (expected, keys) => {
      const s = new IdSet(expected)
      const model = new Set<string>()
      for (const k of keys) {
        assert.is(s.insert(k), !model.has(k), k)
        model.add(k)
      }
      assert.is(s.size, model.size)
      for (const k of keys) assert.ok(s.has(k))
      for (let i = 0; i < 200; i++) assert.is(s.has(`evt-${i}x`), model.has(`evt-${i}x`))
      assert.equal([...s], [...model])
    }),
    fcOptions(60)
  )
})

ids('the empty key is a key like any other, and a size ahead that is not a number is none', () => {
  for (const expected of [0, 100, Number.NaN, Number.POSITIVE_INFINITY, -5, 2.5]) {
    const s = new IdSet(expected)
    assert.not.ok(s.has(''))
    assert.ok(s.insert(''))
    assert.not.ok(s.insert(''), `expected ${expected}`)
    assert.ok(s.has(''))
    assert.ok(s.insert('evt-1'))
    assert.not.ok(s.insert('evt-1'))
    assert.is(s.size, 2)
    assert.equal([...s], ['', 'evt-1'])
    const c = new CommandIndex(expected)
    assert.is(c.begin('', 1, 0, 1), 0)
    assert.is(c.begin('', 2, 1, 2), -1)
    assert.equal(c.get(''), { firstSeq: 1, lastSeq: 1, start: 0, end: 1 })
  }
})

const commands = suite('CommandIndex')

commands('spans begin, extend and are replaced by set; get returns a copy', () => {
  const c = new CommandIndex()
  const e = c.begin('cmd-1', 1, 0, 100)
  assert.ok(e >= 0)
  assert.is(c.begin('cmd-1', 5, 400, 500), -1, 'a command that began already')
  c.extend(e, 3, 300)
  const span = c.get('cmd-1')
  assert.equal(span, { firstSeq: 1, lastSeq: 3, start: 0, end: 300 })
  if (span !== undefined) span.lastSeq = 99
  assert.is(c.get('cmd-1')?.lastSeq, 3)
  c.set('cmd-1', { firstSeq: 1, lastSeq: 4, start: 0, end: 400 })
  c.set('cmd-2', { firstSeq: 5, lastSeq: 7, start: 400, end: 700 })
  assert.equal(c.get('cmd-1'), { firstSeq: 1, lastSeq: 4, start: 0, end: 400 })
  assert.equal(c.get('cmd-2'), { firstSeq: 5, lastSeq: 7, start: 400, end: 700 })
  assert.is(c.get('cmd-3'), undefined)
  assert.is(c.indexOf('cmd-3'), -1)
  assert.is(c.size, 2)
})

commands('many commands: every span and key is kept, in the order added; offsets past 32 bits', () => {
  const c = new CommandIndex()
  const big = 2 ** 40
  for (let i = 0; i < 5000; i++) c.begin(`note-${i}`, i + 1, big + i * 10, big + i * 10 + 10)
  c.begin(COLLIDING[0], 5001, 0, 1)
  c.begin(COLLIDING[1], 5002, 1, 2)
  assert.is(c.size, 5002)
  for (let i = 0; i < 5000; i++)
    assert.equal(c.get(`note-${i}`), { firstSeq: i + 1, lastSeq: i + 1, start: big + i * 10, end: big + i * 10 + 10 })
  assert.is(c.get(COLLIDING[1])?.firstSeq, 5002)
  const keys = [...c.keys()]
  assert.is(keys.length, 5002)
  assert.is(keys[0], 'note-0')
  assert.is(keys[4999], 'note-4999')
  assert.equal(keys.slice(5000), [...COLLIDING])
  assert.ok(c.has('note-42') && !c.has('note-5000'))
})

ids.run()
commands.run()
