/** A case prepared on a fresh demo world through the real `vba` binary (init, then prepare from a report of quest 11117). */
import * as assert from 'uvu/assert'
import { appendFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { vba } from './cli.js'
import { tempDir } from './fs.js'

/** `extraProfile` is appended to the demo world's profile before the case is prepared. */
export const preparedDemoCase = async (
  extraProfile = '',
  prefix = 'investigate'
): Promise<{ dir: string; profile: string; root: string }> => {
  const root = tempDir(prefix)
  const world = await writeDemoWorld(path.join(root, 'world'))
  if (extraProfile !== '') appendFileSync(world.profile, extraProfile)
  const dir = path.join(root, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  writeFileSync(
    path.join(root, 'report.json'),
    JSON.stringify({
      report: 'Players cannot catch wild wolpertingers for quest 11117.',
      entities: [{ type: 'quest', id: 11117 }]
    })
  )
  const p = vba(['case', 'prepare', dir, '--config', world.profile, '--input', path.join(root, 'report.json')])
  assert.is(p.code, 0, p.stderr)
  return { dir, profile: world.profile, root }
}
