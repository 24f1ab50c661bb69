/** Where `vba mcp --http` keeps the sessions clients ended, and how much of it it reads. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync, readdirSync } from 'node:fs'
import * as path from 'node:path'
import { endedSessions, endedSessionsDir } from '../../src/mcp/ended-sessions.js'
import { tempDir } from '../helpers/fs.js'

const ended = suite('the ended MCP sessions')

ended('the folder is never relative to where the server runs (an empty or relative HOME)', () => {
  for (const env of [{ HOME: '' }, { HOME: 'cases/bug-1' }, { HOME: '.', XDG_STATE_HOME: 'state' }, {}]) {
    const dir = endedSessionsDir(env)
    assert.ok(path.isAbsolute(dir), `${JSON.stringify(env)}: ${dir}`)
    assert.ok(dir.endsWith(path.join('vba', 'mcp-ended-sessions')), dir)
  }
  assert.is(endedSessionsDir({ XDG_STATE_HOME: '/srv/state' }), '/srv/state/vba/mcp-ended-sessions')
})

ended(
  'an ended session is found again; a record grown past its bound is refused, so nothing is taken back',
  async () => {
    const dir = tempDir('ended-sessions')
    const record = endedSessions(dir, Buffer.from('a key of this token'))
    assert.is(await record.isEnded('v1.n.p.mac-one'), false)
    await record.end('v1.n.p.mac-one')
    assert.is(await record.isEnded('v1.n.p.mac-one'), true)
    assert.is(await record.isEnded('v1.n.p.mac-two'), false)
    const [file] = readdirSync(dir)
    assert.ok(file !== undefined)
    writeFileSync(path.join(dir, file), 'x'.repeat((8 << 20) + 1))
    try {
      await record.isEnded('v1.n.p.mac-two')
      assert.unreachable('a record past the bound is read')
    } catch (e) {
      assert.is((e as { failure?: { code: string } }).failure?.code, 'IO_ERROR')
    }
  }
)

ended.run()
