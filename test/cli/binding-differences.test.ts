/**
 * What the research preflight compares (src/cli/research-preflight.ts): only where research under
 * the profile would break the rule research.binding, as the rule judges a capture.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { bindingDifferences } from '../../src/cli/research-preflight.js'
import type { Binding } from '../../src/events/settings.js'

const commit = (c: string): string => c.repeat(40)
const bound: Binding = {
  source: { url: 'https://example.org/core.git', commit: commit('a') },
  database: { client: 'mysql2', databases: ['world', 'characters'], snapshot_id: 'w-1' }
}
const with_ = (p: Partial<Binding>): Binding => ({ ...bound, ...p })

const differences = suite('binding differences')

differences('what the profile cannot ask, or asks of a bound database, is no difference', () => {
  assert.equal(bindingDifferences(bound, bound), [])
  assert.equal(bindingDifferences(bound, with_({ database: null })), [], 'a profile without [database]')
  assert.equal(bindingDifferences(bound, with_({ source: null })), [], 'a profile without [source]')
  assert.equal(
    bindingDifferences(
      bound,
      with_({ database: { client: 'mysql2', databases: ['characters', 'world'], snapshot_id: 'w-1' } })
    ),
    [],
    'the same databases in another order'
  )
  assert.equal(
    bindingDifferences(
      bound,
      with_({ database: { client: 'mysql2', databases: ['world', 'logs'], snapshot_id: 'w-1' } })
    ),
    [],
    'a bound database among others'
  )
})

differences('another commit, URL, snapshot, client or no bound database at all is named', () => {
  assert.match(
    bindingDifferences(bound, with_({ source: { url: bound.source?.url ?? '', commit: commit('b') } }))[0] ?? '',
    'source: https://example.org/core.git at aaaaaaaaaaaa, the profile has https://example.org/core.git at bbbbbbbbbbbb'
  )
  assert.match(bindingDifferences(with_({ source: null }), bound)[0] ?? '', 'source: none')
  assert.match(
    bindingDifferences(bound, with_({ database: { client: 'mysql2', databases: ['world'], snapshot_id: 'w-2' } }))[0] ??
      '',
    'database: mysql2 world, characters (snapshot w-1), the profile has mysql2 world (snapshot w-2)'
  )
  assert.is(
    bindingDifferences(
      bound,
      with_({ database: { client: 'better-sqlite3', databases: ['world'], snapshot_id: 'w-1' } })
    ).length,
    1
  )
  assert.is(
    bindingDifferences(bound, with_({ database: { client: 'mysql2', databases: ['logs'], snapshot_id: 'w-1' } }))
      .length,
    1
  )
  assert.is(bindingDifferences(with_({ database: null }), bound).length, 1)
})

differences.run()
