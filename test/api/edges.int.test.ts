/**
 * The client's edges: what openVba and its namespaces answer when given what they cannot use.
 * Every refusal is a VbaError with a code and a classification; nothing leaks a credential; a
 * closed client refuses instead of reopening pools.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import { openVba } from '../../src/index.js'
import { tempDir } from '../helpers/fs.js'
import { rejectsWithVbaError } from '../helpers/vba-error.js'

const rejects = rejectsWithVbaError

const edges = suite('client edges')

edges('a store URL of an unknown scheme is STORE_INVALID, permanent, naming the schemes it takes', async () => {
  const e = await rejects(openVba({ store: 'ftp://example.org/cases' }))
  assert.is(e.code, 'STORE_INVALID')
  assert.ok(e.permanent && !e.retryable && !e.unavailable)
  assert.match(e.message, 'postgres://')
})

edges('a store that cannot be reached is STORE_UNAVAILABLE, and its password is in no output', async () => {
  const e = await rejects(openVba({ store: 'postgres://reader:s3cret-Pw-91@127.0.0.1:1/cases' }))
  assert.is(e.code, 'STORE_UNAVAILABLE')
  assert.ok(e.unavailable && !e.permanent)
  for (const text of [e.message, JSON.stringify(e.toJSON()), String(e.stack)])
    assert.not.ok(text.includes('s3cret-Pw-91'), text)
})

edges('research without a profile says how to give one, whatever the query', async () => {
  const vba = await openVba({})
  try {
    for (const q of [{ kind: 'source.search', text: 'x' }, { kind: 'no.such.kind' }, 42, null]) {
      const e = await rejects(vba.research.query(q))
      assert.is(e.code, 'CONFIG_INVALID')
      assert.match(e.message, 'openVba({ profile')
    }
  } finally {
    await vba.close()
  }
})

edges('a profile that is not an object of sections is CONFIG_INVALID', async () => {
  for (const profile of [42, ['source'], true] as unknown[]) {
    const e = await rejects(openVba({ profile: profile as never }))
    assert.is(e.code, 'CONFIG_INVALID', JSON.stringify(profile))
  }
})

edges('a case that is not there is CASE_NOT_FOUND for verify, events and status alike', async () => {
  const dir = path.join(tempDir('api-edges'), 'absent')
  const vba = await openVba({})
  try {
    for (const call of [() => vba.cases.verify(dir), () => vba.cases.events(dir), () => vba.cases.status(dir)]) {
      const e = await rejects(call())
      assert.is(e.code, 'CASE_NOT_FOUND')
      assert.match(e.message, dir)
      assert.ok(e.permanent)
    }
  } finally {
    await vba.close()
  }
})

edges('close() twice is harmless; a closed client refuses with INVALID_ARGUMENT', async () => {
  const vba = await openVba({})
  await vba.close()
  await vba.close()
  const e = await rejects(vba.cases.verify(tempDir('api-edges-closed')))
  assert.is(e.code, 'INVALID_ARGUMENT')
  assert.match(e.message, 'closed')
})

edges.run()
