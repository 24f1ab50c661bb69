/**
 * `vba import` and bag verification of archives. An archive is extracted (streamed, see
 * extract.ts) into a staging directory on the destination's file system, refusing entries that
 * escape the root, absolute paths, links, devices and duplicate names. Then the bag is verified completely (structure,
 * every checksum), then the case inside it (its own chain and objects), then the archive itself:
 * it must be exactly the canonical archive of its content, so no byte of it (tar headers and
 * padding included) can change unnoticed. Only then is the case moved into place; a bad archive
 * leaves nothing behind.
 */
import { promises as fsp, type Stats } from 'node:fs'
import * as path from 'node:path'
import { failure, type FailureCode } from '../../failures/failure.js'
import { errnoOf, fsyncDir } from '../fs-util.js'
import { FailureError, attempt, coded } from '../../failures/error.js'
import { lostDestination, privateTempDir, stagingFor } from '../staging.js'
import { verifyCase, type VerifyOptions, type VerifyReport } from '../case-store/verify.js'
import { verifyBagDir, type BagFinding, type BagReport, type KnownChecksums } from './verify-bag.js'
import { extractArchive, type ArchiveLimits } from './extract.js'
import { canonicalArchiveSha256 } from './export.js'
import { definedMembers, optional } from '../../optional.js'

export type { ArchiveLimits } from './extract.js'

/**
 * The verification of a bag: the bag itself (BagIt 1.0), the case in it, and for archives whether they are canonical.
 * @category transport
 */
export interface BagCheck {
  readonly bag: BagReport
  readonly case: VerifyReport | null
  /** For archives: whether the archive is byte-for-byte the canonical archive of its content. */
  readonly canonical_archive: boolean | null
  readonly valid: boolean
}

const refuse = (code: FailureCode, message: string, data: Record<string, unknown> = {}): FailureError =>
  new FailureError(failure(code, message, data))

const checkBagDir = async (
  bagRoot: string,
  archiveSha256: string | null,
  caseOptions: VerifyOptions = {},
  known?: KnownChecksums
): Promise<BagCheck> => {
  let bag = await verifyBagDir(bagRoot, optional('known', known))
  if (!bag.valid) return { bag, case: null, canonical_archive: null, valid: false }
  const kase = await attempt(verifyCase(path.join(bagRoot, 'data'), caseOptions))
  if (kase._tag === 'Left') {
    if (kase.left.code === 'CASE_NOT_FOUND') return { bag, case: null, canonical_archive: null, valid: false }
    throw new FailureError(kase.left)
  }
  if (!kase.right.valid) return { bag, case: kase.right, canonical_archive: null, valid: false }
  const labels = caseLabelFindings(bag.info, kase.right)
  if (labels.some((f) => f.severity === 'error'))
    return {
      bag: { ...bag, valid: false, findings: [...bag.findings, ...labels] },
      case: kase.right,
      canonical_archive: null,
      valid: false
    }
  if (labels.length > 0) bag = { ...bag, findings: [...bag.findings, ...labels] }
  const canonical =
    archiveSha256 === null ? null : (await canonicalArchiveSha256(path.join(bagRoot, 'data'))) === archiveSha256
  return { bag, case: kase.right, canonical_archive: canonical, valid: canonical !== false }
}

/** The labels of bag-info.txt that name the case it holds, and what the case holds. */
const CASE_LABELS = [
  ['External-Identifier', (r: VerifyReport) => r.case_id ?? ''],
  ['VBA-Case-Generation', (r: VerifyReport) => String(r.generation)],
  ['VBA-Case-Head', (r: VerifyReport) => r.head?.hash ?? '']
] as const

/**
 * bag-info.txt names the case, the generation and the head hash the bag was made at: each label
 * present must say what the case in data/ holds (a rewritten bag-info.txt with fresh tag
 * manifests would otherwise claim another generation); a bag without them (made by another
 * tool) is only warned about.
 */
const caseLabelFindings = (info: BagReport['info'], kase: VerifyReport): BagFinding[] => {
  const findings: BagFinding[] = []
  for (const [label, held] of CASE_LABELS) {
    const said = info.filter(([l]) => l.toLowerCase() === label.toLowerCase()).map(([, v]) => v.trim())
    if (said.length === 0)
      findings.push({
        code: 'BAG_INFO_CASE_LABEL_MISSING',
        severity: 'warning',
        message: `bag-info.txt has no ${label}`,
        path: 'bag-info.txt'
      })
    for (const value of said) {
      if (value !== held(kase))
        findings.push({
          code: 'BAG_INFO_MISMATCH',
          severity: 'error',
          message: `bag-info.txt says ${label}: ${value}, the case in data/ holds ${held(kase) || '(none)'}`,
          path: 'bag-info.txt'
        })
    }
  }
  return findings
}

/**
 * Verifies a bag directory or a bag archive (extracted into a private temporary directory): the
 * bag, then the case in it (chain, rules, objects; against a receipt with `expectHead`).
 */
export const verifyBag = (
  target: string,
  limits: ArchiveLimits = {},
  caseOptions: Pick<VerifyOptions, 'expectHead' | 'strict' | 'trust' | 'requireSigned' | 'signedHead'> = {}
): Promise<BagCheck> =>
  coded('verify bag', async () => {
    const st = await fsp.stat(target).catch((e: unknown) => {
      throw errnoOf(e) === 'ENOENT' ? refuse('ARCHIVE_NOT_FOUND', `${target} does not exist`, { target }) : e
    })
    if (st.isDirectory()) return checkBagDir(path.resolve(target), null, caseOptions)
    const tmp = await privateTempDir('verify')
    try {
      const { root, sha256, checksums } = await extractArchive(path.resolve(target), tmp, limits)
      return await checkBagDir(root, sha256, caseOptions, checksums)
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true })
    }
  })

/** What an import moved into place, and the verification it passed first. @category transport */
export interface ImportReport {
  readonly case_id: string | null
  readonly generation: number
  readonly check: BagCheck
}

/** Why a bag that did not check out is refused: its code and its error findings (bag first, then case). */
const refusalOf = (
  check: BagCheck
): {
  code: 'BAG_INVALID' | 'CASE_CORRUPT' | 'BAG_NOT_A_CASE' | 'ARCHIVE_NOT_CANONICAL'
  findings: ReadonlyArray<BagFinding | VerifyReport['findings'][number]>
} => ({
  code: !check.bag.valid
    ? 'BAG_INVALID'
    : check.case?.valid === false
      ? 'CASE_CORRUPT'
      : check.case === null
        ? 'BAG_NOT_A_CASE'
        : 'ARCHIVE_NOT_CANONICAL',
  findings: [
    ...check.bag.findings.filter((f) => f.severity === 'error'),
    ...(check.case?.findings.filter((f) => f.severity === 'error') ?? [])
  ]
})

/** How an import reads a package and what it refuses (`importCase`, `withVerifiedPackage`). */
export interface PackageImportOptions {
  readonly limits?: ArchiveLimits
  readonly onProgress?: (done: number, total: number) => void
  /** Refuse a case whose rules did not all apply (RULE_NOT_APPLIED as an error, see VerifyOptions.strict). */
  readonly strict?: boolean
  /**
   * Refuse a case with an unsigned command (UNSIGNED_COMMAND as an error), and one whose signers
   * the trust policy does not allow.
   */
  readonly requireSigned?: boolean
  readonly trust?: VerifyOptions['trust']
}

/** Imports a bag archive as the case directory `dir` (which must not exist or be empty). */
export const importCase = (archive: string, dir: string, options: PackageImportOptions = {}): Promise<ImportReport> =>
  coded('import', async () => {
    const target = path.resolve(dir)
    const parent = path.dirname(target)
    // The archive first: a missing archive is bad input, and creates nothing at the destination.
    await fsp.stat(path.resolve(archive)).catch((e: unknown) => {
      throw errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR'
        ? refuse('ARCHIVE_NOT_FOUND', `${archive} does not exist`, { archive })
        : e
    })
    const staging = await stagingFor(target, 'import', dir)
    try {
      const { root, sha256, checksums } = await extractArchive(
        path.resolve(archive),
        staging,
        options.limits,
        options.onProgress
      )
      const check = await checkBagDir(
        root,
        sha256,
        definedMembers(options, 'strict', 'requireSigned', 'trust'),
        checksums
      )
      if (!check.valid) {
        const { code, findings } = refusalOf(check)
        throw refuse(
          code,
          code === 'ARCHIVE_NOT_CANONICAL'
            ? 'the archive differs from the canonical archive of its content (a changed byte, a copy cut short, or repacked by another tool: copy it again from its source)'
            : `the archive does not verify: ${findings.length} finding(s), first: ${findings[0]?.code ?? code}`,
          { findings: findings.slice(0, 20) }
        )
      }
      // The empty destination makes way; another import that landed there meanwhile (or a file or
      // link put there) wins: CASE_EXISTS, never a bare errno.
      try {
        await fsp.rmdir(target)
      } catch (e) {
        if (errnoOf(e) !== 'ENOENT') lostDestination(e, dir)
      }
      await fsp.rename(path.join(root, 'data'), target).catch((e: unknown) => lostDestination(e, dir))
      await fsyncDir(parent)
      return { case_id: check.case?.case_id ?? null, generation: check.case?.generation ?? 0, check }
    } finally {
      await fsp.rm(staging, { recursive: true, force: true })
    }
  })

/**
 * Runs `work` on the case directory of `source` once it has verified completely: a case
 * directory (verified as a case), a bag directory or a bag archive (verified as `import` does,
 * extracted into a private temporary directory that is removed afterwards). Nothing is handed to
 * `work` unless everything checks out.
 */
export const withVerifiedPackage = async <A>(
  source: string,
  work: (caseDir: string) => Promise<A>,
  options: PackageImportOptions = {}
): Promise<A> => {
  const caseOptions = definedMembers(options, 'strict', 'requireSigned', 'trust')
  const resolved = path.resolve(source)
  let st: Stats
  try {
    st = await fsp.stat(resolved)
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') throw refuse('CASE_NOT_FOUND', `${source} does not exist`)
    throw e
  }
  const refuseCheck = (check: BagCheck): never => {
    const { code, findings } = refusalOf(check)
    throw refuse(
      code,
      // A repacked archive has no finding of its own: its bag and case verify, its bytes are not the canonical ones.
      code === 'ARCHIVE_NOT_CANONICAL'
        ? `${source} differs from the canonical archive of its content (a changed byte, a copy cut short, or repacked by another tool: copy it again from its source); nothing was imported`
        : `${source} does not verify: ${findings.length} finding(s), first: ${findings[0]?.code ?? code}; nothing was imported`,
      { findings: findings.slice(0, 20) }
    )
  }
  if (st.isDirectory()) {
    const isBag = await fsp.access(path.join(resolved, 'bagit.txt')).then(
      () => true,
      () => false
    )
    if (!isBag) {
      // The store verifies a case directory as it copies it; who signed it is checked here.
      if (options.requireSigned === true || options.trust !== undefined) {
        const report = await verifyCase(resolved, caseOptions)
        const errors = report.findings.filter((f) => f.severity === 'error')
        if (!report.valid)
          throw refuse(
            'CASE_CORRUPT',
            `${source} does not verify: ${errors.length} finding(s), first: ${errors[0]?.code ?? 'CASE_CORRUPT'}; nothing was imported`,
            { findings: errors.slice(0, 20) }
          )
      }
      return work(resolved)
    }
    const check = await checkBagDir(resolved, null, caseOptions)
    if (!check.valid) refuseCheck(check)
    return work(path.join(resolved, 'data'))
  }
  const tmp = await privateTempDir('import')
  try {
    const { root, sha256, checksums } = await extractArchive(resolved, tmp, options.limits, options.onProgress)
    const check = await checkBagDir(root, sha256, caseOptions, checksums)
    if (!check.valid) refuseCheck(check)
    return await work(path.join(root, 'data'))
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true })
  }
}
