/** showInvisible: the one function the report and the terminal use to show invisible characters (issue 23, point 9). */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { showInvisible, showInvisibleJson } from '../../src/projections/visible-text.js'

const test = suite('showInvisible')

test('every default-ignorable, format and control character becomes a visible code', () => {
  const cases: Array<[string, string]> = [
    ['\u00ad', 'U+00AD'],
    ['\u034f', 'U+034F'],
    ['\u180e', 'U+180E'],
    ['\u17b4', 'U+17B4'],
    ['\u206a', 'U+206A'],
    ['\u206f', 'U+206F'],
    ['\ufe0f', 'U+FE0F'],
    ['\u{e0041}', 'U+E0041'],
    ['\u{e007f}', 'U+E007F'],
    ['\u001b', 'U+001B'],
    ['\u0007', 'U+0007'],
    ['\u0008', 'U+0008'],
    ['\u009b', 'U+009B'],
    ['\u202e', 'U+202E'],
    ['\u2066', 'U+2066'],
    ['\u200b', 'U+200B'],
    ['\ufeff', 'U+FEFF'],
    ['\u3164', 'U+3164'],
    ['\n', 'U+000A']
  ]
  for (const [c, label] of cases) assert.is(showInvisible(`a${c}b`), `a<${label}>b`, label)
})

test("visible text is left alone; kept characters stay; the mark is the caller's", () => {
  const plain = 'Grüße, 世界, wolpertinger 🐇, tab\tend'
  assert.is(showInvisible(plain, { keep: '\t' }), plain)
  assert.is(showInvisible('x\ny\u202ez', { keep: '\n', mark: (l) => `[${l}]` }), 'x\ny[U+202E]z')
})

test.run()

const json = suite('showInvisibleJson')

json('invisible characters become JSON escapes: seen, and the text parses to the same value', () => {
  const value = { a: 'ok\u202egnp', b: ['\u2066x\u2069', 'tag\u{e0041}', 'c1\u0085'], 'k\u200b': 'line\nbreak' }
  const text = showInvisibleJson(JSON.stringify(value))
  assert.is(
    text,
    '{"a":"ok\\u202Egnp","b":["\\u2066x\\u2069","tag\\uDB40\\uDC41","c1\\u0085"],"k\\u200B":"line\\nbreak"}'
  )
  assert.equal(JSON.parse(text), value)
  const pretty = JSON.stringify(value, null, '\t')
  assert.equal(JSON.parse(showInvisibleJson(pretty)), value, 'JSON whitespace is kept')
  assert.is(showInvisibleJson('{"plain":"Grüße 🐇"}'), '{"plain":"Grüße 🐇"}')
})

json.run()
