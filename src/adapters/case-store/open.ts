/** Opening a case directory: read and check the whole chain (not object contents) and index its commands. */
import * as path from 'node:path'
import { FailureError, coded } from '../../failures/error.js'
import { scanCase } from './scan.js'
import { handleFromScan, type CaseHandle } from './handle.js'
import type { CaseStore } from './store.js'
import { ensureCaseDir } from './case-dir.js'

export { corrupt, generationOf, type CaseHandle, type Cursor } from './handle.js'
export { ensureCaseDir } from './case-dir.js'

/**
 * Opens a case directory for appending through `store` (the store the handle appends with; the
 * directory store's `openCase` passes itself): checks declaration, HEAD, every event line and
 * every event's rules, and folds the case state (`handle.cursor.state`). A torn or
 * unacknowledged tail is reported in `notices` and cut by the next append; anything else that
 * does not check out (a forged event included) is CASE_CORRUPT with its findings. Changes
 * nothing on disk.
 */
export const openCaseIn = (dir: string, store: CaseStore): Promise<CaseHandle> =>
  coded('open case', async () => {
    const resolved = path.resolve(dir)
    await ensureCaseDir(resolved)
    const result = handleFromScan(resolved, await scanCase(resolved, { canonical: false }), store)
    if ('_tag' in result) throw new FailureError(result)
    return result
  })
