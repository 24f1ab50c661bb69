/** Creating a new, empty case package. */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { canonicalJson } from '../../events/canonical.js'
import { genesisHash } from '../../events/chain.js'
import { CASE_FORMAT, CASE_FORMAT_VERSION, CaseDeclaration, type Head } from '../../events/envelope.js'
import { CURRENT_FORMAT_GENERATION } from '../../events/generations.js'
import { fsyncDir, writeNewSynced } from '../fs-util.js'
import { fail, coded } from '../../failures/error.js'
import { lostDestination, stagingFor } from '../staging.js'
import { systemEnv, type Env } from '../env.js'
import { VERSION } from '../../version.js'
import { DECLARATION_FILE, HEAD_FILE, LOG_FILE, OBJECTS_DIR } from './layout.js'
import { optional } from '../../optional.js'

/** @category cases */
export interface InitOptions {
  readonly dir: string
  /** Defaults to a fresh `case-<uuid>`. */
  readonly caseId?: string
  readonly title?: string
  readonly env?: Env
}

/**
 * Creates a case directory with case.json, an empty log and HEAD at generation 0. The package is
 * assembled in a sibling temporary directory and renamed into place, so a crash leaves either no
 * case or a complete one. An existing non-empty DIR is refused (CASE_EXISTS).
 */
export const initCase = (options: InitOptions): Promise<CaseDeclaration> =>
  coded('case init', async () => {
    const env = options.env ?? systemEnv
    const target = path.resolve(options.dir)
    const candidate = {
      format: CASE_FORMAT,
      format_version: CASE_FORMAT_VERSION,
      case_id: options.caseId ?? `case-${env.newId()}`,
      created_at: env.now().toISOString(),
      created_by: `vba ${VERSION}`,
      format_generation: CURRENT_FORMAT_GENERATION,
      ...optional('title', options.title)
    }
    const decoded = CaseDeclaration.decode(candidate)
    if (E.isLeft(decoded))
      return fail(
        'INVALID_ARGUMENT',
        'case id must be 1-128 characters of letters, digits, . _ : - (starting with a letter or digit)',
        { case_id: candidate.case_id }
      )
    const parent = path.dirname(target)
    const staging = await stagingFor(target, 'init', options.dir)
    try {
      const declaration = decoded.right
      const declText = canonicalJson(declaration)
      const genesis = genesisHash(declaration)
      if (E.isLeft(declText) || E.isLeft(genesis)) return fail('INTERNAL_ERROR', 'declaration is not canonicalisable')
      const head: Head = { seq: 0, hash: genesis.right, bytes: 0 }
      const headText = canonicalJson(head)
      if (E.isLeft(headText)) return fail('INTERNAL_ERROR', 'HEAD is not canonicalisable')
      await writeNewSynced(path.join(staging, DECLARATION_FILE), `${declText.right}\n`)
      await writeNewSynced(path.join(staging, LOG_FILE), '')
      await writeNewSynced(path.join(staging, HEAD_FILE), `${headText.right}\n`)
      await fsp.mkdir(path.join(staging, OBJECTS_DIR, 'sha256'), { recursive: true })
      await fsyncDir(staging)
      // rename onto an existing empty directory works on Linux; a race with another init (or a
      // file or link put there meanwhile) does not
      await fsp.rename(staging, target).catch((e: unknown) => lostDestination(e, options.dir))
      await fsyncDir(parent)
      return declaration
    } finally {
      await fsp.rm(staging, { recursive: true, force: true })
    }
  })
