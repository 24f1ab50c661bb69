import { attempt } from '../../src/failures/error.js'
/** Building real case packages on disk for tests. */
import * as path from 'node:path'
import { initCase } from '../../src/fp.js'
import type { CaseHandle } from '../../src/adapters/case-store/open.js'
import { openCase } from '../../src/fp.js'
import { appendCommand } from '../../src/adapters/case-store/append.js'
import { objectRefOf } from '../../src/adapters/case-store/objects.js'
import { fixedEnv, type Env } from '../../src/adapters/env.js'
import { right, tempDir } from './fs.js'

/** A case with a few notes and an attachment, written with a deterministic clock and ids. */
export const sampleCase = async (
  dir = path.join(tempDir('case'), 'case'),
  env: Env = fixedEnv()
): Promise<CaseHandle> => {
  right(await initCase({ dir, caseId: 'case-sample', title: 'sample', env })())
  const h = right(await openCase(dir)())
  const log = Buffer.from('2026-01-01 12:00:00 ERROR creature 23487 did not despawn\n')
  right(
    await attempt(
      appendCommand(
        h,
        {
          commandId: 'cmd-1',
          expectedGeneration: 0,
          events: [
            { type: 'NoteRecorded', actor: 'operator', data: { text: 'report received', format: 'plain' } },
            {
              type: 'AttachmentAdded',
              actor: 'operator',
              data: { name: 'server.log', object: objectRefOf(log, 'text/plain') }
            }
          ],
          objects: [log]
        },
        { env }
      )
    )
  )
  right(
    await attempt(
      appendCommand(
        h,
        {
          commandId: 'cmd-2',
          expectedGeneration: 2,
          events: [
            { type: 'NoteRecorded', actor: 'controller', data: { text: 'the controller notes', format: 'plain' } }
          ]
        },
        { env }
      )
    )
  )
  right(
    await attempt(
      appendCommand(
        h,
        {
          commandId: 'cmd-3',
          expectedGeneration: 3,
          events: [{ type: 'NoteRecorded', actor: 'controller', data: { text: '**markdown**', format: 'markdown' } }]
        },
        { env }
      )
    )
  )
  return h
}
