/** The shapes of a report file, told apart by content: REPORT.json, an issue exported by gh, Markdown or text. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as E from 'fp-ts/lib/Either.js'
import { parseReportText } from '../../src/commands/report-formats.js'

const formats = suite('report formats')

/** What `gh issue view 4711 --json number,title,body,url,labels,comments` prints (shortened, real member names). */
const ghIssue = {
  body: '**Description:**\r\nNetted wolpertingers vanish, no item is given.\r\n\r\n**Steps to reproduce:**\r\n1. `.quest add 11117`\r\n2. Use the net',
  comments: [
    {
      id: 'IC_kwDOB',
      author: { login: 'tester' },
      authorAssociation: 'NONE',
      body: 'Same here on the latest build.',
      createdAt: '2021-05-02T10:00:00Z',
      includesEditedContent: false,
      isMinimized: false,
      minimizedReason: '',
      reactionGroups: [],
      url: 'https://github.com/azerothcore/azerothcore-wotlk/issues/4711#issuecomment-1',
      viewerDidAuthor: false
    },
    { author: { login: 'quiet' }, body: '   ', createdAt: '2021-05-03T10:00:00Z' }
  ],
  labels: [{ id: 'LA_1', name: 'Confirmed', description: '', color: 'fbca04' }, { name: 'Quest' }],
  number: 4711,
  title: 'Wild Wolpertingers disappear',
  url: 'https://github.com/azerothcore/azerothcore-wotlk/issues/4711'
}

formats('an issue exported by gh: title, body, labels and comments as text; its URL is the origin', () => {
  const r = parseReportText(JSON.stringify(ghIssue, null, 2), 'issue.json')
  assert.ok(E.isRight(r))
  if (E.isLeft(r)) return
  assert.is(r.right.format, 'github-issue')
  assert.is(r.right.origin, ghIssue.url)
  assert.equal(r.right.entities, [])
  assert.is(
    r.right.report,
    [
      '# Wild Wolpertingers disappear',
      '**Description:**\nNetted wolpertingers vanish, no item is given.\n\n**Steps to reproduce:**\n1. `.quest add 11117`\n2. Use the net',
      'Labels: Confirmed, Quest',
      '## Comments',
      '### tester, 2021-05-02T10:00:00Z',
      'Same here on the latest build.'
    ].join('\n\n') + '\n'
  )
})

formats('an issue with an empty body, no labels and no comments is its title', () => {
  const r = parseReportText(JSON.stringify({ title: 'Crash on login', body: '', number: 1 }), 'x.json')
  assert.ok(E.isRight(r) && r.right.report === '# Crash on login\n' && r.right.origin === null)
})

formats('REPORT.json as before, with an optional origin', () => {
  const r = parseReportText(
    JSON.stringify({ report: 'r', entities: [{ type: 'quest', id: 1 }], origin: 'https://example.org/1' }),
    'report.json'
  )
  assert.ok(E.isRight(r))
  if (E.isRight(r)) {
    assert.is(r.right.format, 'report-json')
    assert.equal(r.right.entities, [{ type: 'quest', id: 1 }])
    assert.is(r.right.origin, 'https://example.org/1')
  }
})

formats('REPORT.json without entities: the report alone (extraction finds its ids)', () => {
  const r = parseReportText(JSON.stringify({ report: 'Quest ID: 11912 broken' }), 'ok.json')
  assert.ok(E.isRight(r) && r.right.format === 'report-json' && r.right.entities.length === 0)
  const wrong = parseReportText(JSON.stringify({ report: 'r', entities: 'quest 5' }), 'ok.json')
  assert.ok(E.isLeft(wrong) && wrong.left.message.includes('entities'))
})

formats('Markdown and text are the report verbatim, whatever the name', () => {
  const md = '# Quest 11117 broken\n\nThe wolpertingers vanish.\r\n'
  for (const name of ['report.md', 'report.txt', 'report']) {
    const r = parseReportText(md, name)
    assert.ok(E.isRight(r) && r.right.format === 'text' && r.right.report === md && r.right.origin === null, name)
  }
  // Text that starts like JSON but is not JSON is text too, unless the file says it is JSON.
  const braces = '{ Quest } is broken'
  assert.ok(E.isRight(parseReportText(braces, 'report.md')))
  const bad = parseReportText(braces, 'report.json')
  assert.ok(E.isLeft(bad) && bad.left.code === 'INPUT_INVALID' && bad.left.message.includes('as JSON'))
})

formats('JSON of neither shape, a bad URL or a bad REPORT.json are INPUT_INVALID', () => {
  const cases: Array<[string, string]> = [
    ['[1, 2]', 'neither input shape'],
    ['{"number": 5}', 'neither input shape'],
    ['{"report": 5, "entities": []}', 'the inputs are invalid'],
    [JSON.stringify({ title: 't', body: 'b', url: 'javascript:alert(1)' }), 'http(s) address'],
    [JSON.stringify({ title: 't', body: 5 }), 'the exported issue is invalid'],
    [JSON.stringify({ report: 'r', entities: [], origin: 'ftp://x' }), 'the inputs are invalid']
  ]
  for (const [text, message] of cases) {
    const r = parseReportText(text, 'in.json')
    assert.ok(E.isLeft(r) && r.left.code === 'INPUT_INVALID', text)
    if (E.isLeft(r)) assert.ok(r.left.message.includes(message), `${text}: ${r.left.message}`)
  }
})

formats.run()
