/**
 * `vba import` and bag verification of archives. An archive is extracted into a temporary
 * directory on the destination's file system, refusing entries that escape the root, absolute
 * paths, links, devices and duplicate names. Then the bag is verified completely (structure,
 * every checksum), then the case inside it (its own chain and objects), then the archive itself:
 * it must be exactly the canonical archive of its content, so no byte of it (tar headers and
 * padding included) can change unnoticed. Only then is the case moved into place; a bad archive
 * leaves nothing behind.
 */
import { createReadStream, mkdirSync, writeFileSync, promises as fsp } from 'node:fs'
import { createHash } from 'node:crypto'
import * as os from 'node:os'
import * as path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import * as TE from 'fp-ts/lib/TaskEither.js'
import tar from 'tar-stream'
import { failure, type Failure, type FailureCode } from '../../domain/failure.js'
import { unsafeBagPath } from '../../domain/bag-paths.js'
import { FailureError, errnoOf, fsyncDir, stagingFor, toFailure } from '../fs-util.js'
import { verifyCase, type VerifyOptions, type VerifyReport } from '../case-store/verify.js'
import { verifyBagDir, type BagReport } from './verify-bag.js'
import { canonicalArchiveSha256 } from './export.js'

export interface ArchiveLimits {
  /** Most entries an archive may hold (default 2,000,000). */
  readonly maxEntries?: number
  /** Most bytes of file content it may unpack to (default 256 GiB). */
  readonly maxBytes?: number
}

/** The verification of a bag: the bag itself (BagIt 1.0), the case in it, and for archives whether they are canonical. */
export interface BagCheck {
  readonly bag: BagReport
  readonly case: VerifyReport | null
  /** For archives: whether the archive is byte-for-byte the canonical archive of its content. */
  readonly canonical_archive: boolean | null
  readonly valid: boolean
}

const refuse = (code: FailureCode, message: string, data: Record<string, unknown> = {}): FailureError => new FailureError(failure(code, message, data))

/** Extracts `archive` under `into`; returns the bag's root directory and the archive's SHA-256. */
export const extractArchive = async (archive: string, into: string, limits: ArchiveLimits = {}, onProgress?: (done: number, total: number) => void): Promise<{ root: string; sha256: string }> => {
  const maxEntries = limits.maxEntries ?? 2_000_000
  const maxBytes = limits.maxBytes ?? 256 * 2 ** 30
  const total = (await fsp.stat(archive)).size
  const hash = createHash('sha256')
  let read = 0
  const meter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk)
      read += chunk.length
      onProgress?.(read, total)
      cb(null, chunk)
    }
  })
  const extract = tar.extract()
  const seen = new Set<string>()
  const made = new Set<string>()
  let root: string | null = null
  let entries = 0
  let bytes = 0
  extract.on('entry', (header, stream, next) => {
    const fail = (e: FailureError): void => {
      stream.resume()
      extract.destroy(e)
    }
    entries++
    if (entries > maxEntries) return fail(refuse('ARCHIVE_TOO_LARGE', `the archive has more than ${maxEntries} entries`))
    const name = header.name.replace(/\/+$/, '')
    const unsafe = unsafeBagPath(name)
    if (unsafe !== null || name.includes('\\')) return fail(refuse('ARCHIVE_ENTRY_UNSAFE', `archive entry ${JSON.stringify(name.slice(0, 120))} is unsafe (${unsafe ?? 'backslash'})`, { entry: name.slice(0, 200) }))
    if (header.type !== 'file' && header.type !== 'directory') return fail(refuse('ARCHIVE_ENTRY_TYPE', `archive entry ${JSON.stringify(name.slice(0, 120))} is a ${header.type ?? 'special entry'}; only files and directories are accepted`, { entry: name.slice(0, 200), type: header.type ?? null }))
    const top = name.split('/')[0] ?? ''
    root ??= top
    if (top !== root) return fail(refuse('ARCHIVE_ENTRY_UNSAFE', `archive entry ${JSON.stringify(name.slice(0, 120))} is outside the bag's root ${root}`, { entry: name.slice(0, 200) }))
    if (seen.has(name)) return fail(refuse('ARCHIVE_DUPLICATE_ENTRY', `archive entry ${JSON.stringify(name.slice(0, 120))} appears twice`, { entry: name.slice(0, 200) }))
    seen.add(name)
    const target = path.join(into, name)
    if (!target.startsWith(into + path.sep)) return fail(refuse('ARCHIVE_ENTRY_UNSAFE', 'archive entry escapes the destination'))
    if (header.type === 'directory') {
      fsp.mkdir(target, { recursive: true }).then(() => {
        stream.resume()
        next()
      }, (e: unknown) => extract.destroy(e as Error))
      return
    }
    bytes += header.size ?? 0
    if (bytes > maxBytes) return fail(refuse('ARCHIVE_TOO_LARGE', `the archive unpacks to more than ${maxBytes} bytes`))
    // Entries are collected in memory and written with one synchronous call: small files dominate
    // case bags, and a promise per open/write/close cost more than the writes (10,000 objects).
    const chunks: Buffer[] = []
    stream.on('data', (c: unknown) => {
      chunks.push(c as Buffer)
    })
    stream.on('error', (e: Error) => extract.destroy(e))
    stream.on('end', () => {
      try {
        const dir = path.dirname(target)
        if (!made.has(dir)) {
          mkdirSync(dir, { recursive: true })
          made.add(dir)
        }
        writeFileSync(target, Buffer.concat(chunks), { flag: 'wx', mode: 0o644 })
        next()
      } catch (e) {
        extract.destroy(errnoOf(e) === 'EEXIST' ? refuse('ARCHIVE_DUPLICATE_ENTRY', `archive entry ${JSON.stringify(name.slice(0, 120))} collides with another`) : (e as Error))
      }
    })
  })
  try {
    await pipeline(createReadStream(archive), meter, extract)
  } catch (e) {
    if (e instanceof FailureError) throw e
    throw refuse('ARCHIVE_INVALID', `the archive is not a valid tar (${e instanceof Error ? e.message.slice(0, 120) : 'read error'})`)
  }
  if (root === null) throw refuse('ARCHIVE_INVALID', 'the archive is empty')
  return { root: path.join(into, root), sha256: hash.digest('hex') }
}

const checkBagDir = async (bagRoot: string, archiveSha256: string | null, caseOptions: VerifyOptions = {}): Promise<BagCheck> => {
  const bag = await verifyBagDir(bagRoot)
  if (!bag.valid) return { bag, case: null, canonical_archive: null, valid: false }
  const kase = await verifyCase(path.join(bagRoot, 'data'), caseOptions)()
  if (kase._tag === 'Left') {
    if (kase.left.code === 'CASE_NOT_FOUND') return { bag, case: null, canonical_archive: null, valid: false }
    throw new FailureError(kase.left)
  }
  if (!kase.right.valid) return { bag, case: kase.right, canonical_archive: null, valid: false }
  const canonical = archiveSha256 === null ? null : (await canonicalArchiveSha256(path.join(bagRoot, 'data'))) === archiveSha256
  return { bag, case: kase.right, canonical_archive: canonical, valid: canonical !== false }
}

/**
 * Verifies a bag directory or a bag archive (extracted into a private temporary directory): the
 * bag, then the case in it (chain, rules, objects; against a receipt with `expectHead`).
 */
export const verifyBag = (target: string, limits: ArchiveLimits = {}, caseOptions: Pick<VerifyOptions, 'expectHead'> = {}): TE.TaskEither<Failure, BagCheck> =>
  TE.tryCatch(async () => {
    const st = await fsp.stat(target)
    if (st.isDirectory()) return checkBagDir(path.resolve(target), null, caseOptions)
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'vba-verify-'))
    try {
      const { root, sha256 } = await extractArchive(path.resolve(target), tmp, limits)
      return await checkBagDir(root, sha256, caseOptions)
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true })
    }
  }, (e) => toFailure(e, 'verify bag'))

/** What an import moved into place, and the verification it passed first. */
export interface ImportReport {
  readonly case_id: string | null
  readonly generation: number
  readonly check: BagCheck
}

/** Imports a bag archive as the case directory `dir` (which must not exist or be empty). */
export const importCase = (archive: string, dir: string, options: { limits?: ArchiveLimits; onProgress?: (done: number, total: number) => void } = {}): TE.TaskEither<Failure, ImportReport> =>
  TE.tryCatch(async () => {
    const target = path.resolve(dir)
    const parent = path.dirname(target)
    const staging = await stagingFor(target, 'import', dir)
    try {
      const { root, sha256 } = await extractArchive(path.resolve(archive), staging, options.limits, options.onProgress)
      const check = await checkBagDir(root, sha256)
      if (!check.valid) {
        const findings = [...check.bag.findings.filter((f) => f.severity === 'error'), ...(check.case?.findings.filter((f) => f.severity === 'error') ?? [])]
        const code = !check.bag.valid ? 'BAG_INVALID' : check.case?.valid === false ? 'CASE_CORRUPT' : check.case === null ? 'BAG_NOT_A_CASE' : 'ARCHIVE_NOT_CANONICAL'
        throw refuse(code, code === 'ARCHIVE_NOT_CANONICAL' ? 'the archive differs from the canonical archive of its content (a changed byte, or repacked by another tool)' : `the archive does not verify: ${findings.length} finding(s), first: ${findings[0]?.code ?? code}`, { findings: findings.slice(0, 20) })
      }
      try {
        await fsp.rmdir(target)
      } catch (e) {
        if (errnoOf(e) !== 'ENOENT') throw e
      }
      await fsp.rename(path.join(root, 'data'), target)
      await fsyncDir(parent)
      return { case_id: check.case?.case_id ?? null, generation: check.case?.generation ?? 0, check }
    } finally {
      await fsp.rm(staging, { recursive: true, force: true })
    }
  }, (e) => toFailure(e, 'import'))

/**
 * Runs `work` on the case directory of `source` once it has verified completely: a case
 * directory (verified as a case), a bag directory or a bag archive (verified as `import` does,
 * extracted into a private temporary directory that is removed afterwards). Nothing is handed to
 * `work` unless everything checks out.
 */
export const withVerifiedPackage = async <A>(source: string, work: (caseDir: string) => Promise<A>, options: { limits?: ArchiveLimits; onProgress?: (done: number, total: number) => void } = {}): Promise<A> => {
  const resolved = path.resolve(source)
  let st
  try {
    st = await fsp.stat(resolved)
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') throw refuse('CASE_NOT_FOUND', `${source} does not exist`)
    throw e
  }
  const refuseCheck = (check: BagCheck): never => {
    const findings = [...check.bag.findings.filter((f) => f.severity === 'error'), ...(check.case?.findings.filter((f) => f.severity === 'error') ?? [])]
    const code = !check.bag.valid ? 'BAG_INVALID' : check.case?.valid === false ? 'CASE_CORRUPT' : check.case === null ? 'BAG_NOT_A_CASE' : 'ARCHIVE_NOT_CANONICAL'
    throw refuse(code, `${source} does not verify: ${findings.length} finding(s), first: ${findings[0]?.code ?? code}; nothing was imported`, { findings: findings.slice(0, 20) })
  }
  if (st.isDirectory()) {
    const isBag = await fsp.access(path.join(resolved, 'bagit.txt')).then(() => true, () => false)
    if (!isBag) return work(resolved)
    const check = await checkBagDir(resolved, null)
    if (!check.valid) refuseCheck(check)
    return work(path.join(resolved, 'data'))
  }
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'vba-import-'))
  try {
    const { root, sha256 } = await extractArchive(resolved, tmp, options.limits, options.onProgress)
    const check = await checkBagDir(root, sha256)
    if (!check.valid) refuseCheck(check)
    return await work(path.join(root, 'data'))
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true })
  }
}
