/** The VbaError a client call rejects with (a test fails on any other outcome). */
import * as assert from 'uvu/assert'
import { isVbaError, type VbaError } from '../../src/index.js'

export const rejectsWithVbaError = async (p: Promise<unknown>): Promise<VbaError> => {
  try {
    await p
  } catch (e) {
    assert.ok(isVbaError(e), `a VbaError, not ${String(e)}`)
    return e as VbaError
  }
  throw new Error('expected a rejection')
}
