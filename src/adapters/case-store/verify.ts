/**
 * Full verification of a case package: everything {@link scanCase} checks, plus every object's
 * digest and size, every reference's target, and every file's right to be in the package.
 * Read-only: a verified case is byte-for-byte what it was before.
 */
import { type Dirent, promises as fsp, closeSync, readdirSync, readSync } from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { finding, type Finding } from '../../events/findings.js'
import { sha256Digest } from '../../events/canonical.js'
import { objectPath } from '../../events/refs.js'
import { errnoOf } from '../fs-util.js'
import { coded } from '../../failures/error.js'
import { eachChunk, isFileRefusal, openRegularSync, readRegularSync } from '../regular-file.js'
import {
  DECLARATION_FILE,
  HEAD_FILE,
  LOCK_FILE,
  LOG_FILE,
  OBJECTS_DIR,
  RUN_FILE,
  SUMMARY_FILE,
  TEMP_PREFIX
} from './layout.js'
import { scanCase, type ScanOptions, type ScanResult } from './scan.js'
import { startLineWorkersFor } from './feed-log.js'
import { notOwnDirectory } from './objects.js'
import { ensureCaseDir } from './case-dir.js'
import type { EvidenceSummary } from '../../projections/report/render.js'
import type { ObjectRefLite } from '../../domain/case-state.js'
import type { Receipt } from './append.js'
import { optional } from '../../optional.js'
import type { SignerSummary, TrustPolicy } from './signatures.js'
import type { HeadSigner, SignedHead } from '../../events/signed-note.js'
import { verifyWatch } from './verify-report.js'
import type { ReceiptCheck } from './receipts.js'

export { parseReceipt } from './receipts.js'

/** The result of verifying a case: valid or not, its head, counts, and every finding. @category cases */
export interface VerifyReport {
  readonly valid: boolean
  readonly case_id: string | null
  readonly generation: number
  /** The last verified event as a receipt (seq, hash), or null for a case whose log does not check out. */
  readonly head: Receipt | null
  readonly events: number
  readonly objects: number
  readonly object_bytes: number
  readonly log_bytes: number
  readonly findings: readonly Finding[]
  /** Findings beyond the reporting cap (counted, not listed). */
  readonly omitted_findings: number
  /** With `expectHead`: the receipt, and whether the case holds its event (`matched`; null when not compared). */
  readonly receipt?: ReceiptCheck
  /**
   * Who signed the commands (each signer whose signatures hold, with its count and, with a trust
   * policy, whether it is trusted) and how many commands are unsigned; present when the case has a
   * signature or the verification asked about signers.
   */
  readonly signatures?: { readonly signers: readonly SignerSummary[]; readonly unsigned_commands: number }
  /** With a signed head (`expectHead` as a note): who signed it and whether the trust file allows each. */
  readonly signed_head?: { readonly case_id: string; readonly signers: readonly HeadSigner[] }
  /** With `--against`: what re-deriving the evidence from git and the database found (its findings are among `findings`). */
  readonly evidence?: EvidenceSummary
}

export type { EvidenceSummary }

const HEX2 = /^[0-9a-f]{2}$/
const HEX62 = /^[0-9a-f]{62}$/

/** Objects up to this size are read in one call; larger ones are hashed in chunks (memory stays bounded). */
const SMALL_OBJECT = 4 << 20

/**
 * Objects up to this size keep the bytes they were hashed from, while the kept bytes stay within
 * KEPT_BYTES: the rules read them (raw answers, captures, the report and the facts) without
 * opening the file again, and check the very bytes whose digest matched. Only where the log is read
 * on the main thread alone (smaller than the line workers' threshold, as an investigation's is):
 * the walk runs while the log is read and cannot tell which objects the rules will read, and a
 * large log's objects are mostly ones they never read (attachments), whose bytes only raised the
 * peak memory (bench/replay-verify: verify's peak RSS 114 -> 139-146 MiB, none of them read).
 */
const KEPT_OBJECT = 256 << 10
const KEPT_BYTES = 32 << 20

const hashFile = async (
  file: string,
  rel: string,
  keep: boolean
): Promise<{ digest: string; size: number; bytes: Buffer | null }> => {
  const h = createHash('sha256')
  const { fd, size } = openRegularSync(file, { shown: rel })
  let read: number
  let kept: Buffer | null = null
  try {
    // Objects are mostly small: one synchronous read beats a promise per open/read/close.
    if (size <= SMALL_OBJECT) {
      const bytes = Buffer.allocUnsafe(size)
      read = readSync(fd, bytes, 0, size, 0)
      const got = bytes.subarray(0, read)
      h.update(got)
      if (keep && read <= KEPT_OBJECT) kept = got
    } else read = -1
  } finally {
    closeSync(fd)
  }
  if (read === -1) read = await eachChunk(file, (chunk) => h.update(chunk), { shown: rel })
  return { digest: `sha256:${h.digest('hex')}`, size: read, bytes: kept }
}

/** Objects hashed between two turns of the event loop (~20 us each). */
const OBJECTS_PER_TURN = 16

/**
 * Runs `work` over items in order, giving the event loop a turn after every OBJECTS_PER_TURN: the
 * small objects are hashed synchronously, and a walk that never left the microtask queue kept
 * the log scan beside it from hearing its line worker (the worker sat idle for the first
 * 250-400 ms of a verify of 5,000 objects).
 */
const forEachYielding = async <A>(items: readonly A[], work: (a: A) => Promise<void>): Promise<void> => {
  for (let i = 0; i < items.length; i++) {
    if (i % OBJECTS_PER_TURN === OBJECTS_PER_TURN - 1) await new Promise<void>((resolve) => setImmediate(resolve))
    await work(items[i] as A)
  }
}

/** @category cases */
export interface VerifyOptions {
  /** Extra per-event hook (replay uses it to fold projections in the same pass). */
  readonly onEvent?: ScanOptions['onEvent']
  /** Log size from which line digests are computed on a worker thread (see scanCase). */
  readonly parallelFromBytes?: number
  /** Progress over log bytes and then object files, for terminals. */
  readonly onProgress?: (phase: 'log' | 'objects', done: number, total: number) => void
  /**
   * A receipt kept outside the case: the case must hold this event (seq and hash). A case that
   * ends before it was rolled back (HEAD_ROLLBACK); one with another event there was forked
   * (HEAD_FORK).
   */
  readonly expectHead?: Receipt
  /** Benchmarks only: skip the rules, to measure their cost (see scanCase). */
  readonly rules?: boolean
  /**
   * Every rule applies, for cases of any age: what the rules could not check (RULE_NOT_APPLIED:
   * old versions that lack what a rule needs, no binding recorded) is an error, not a notice.
   */
  readonly strict?: boolean
  /** Whom to trust: signatures by keys it does not allow for their principal, time or actors are SIGNER_UNTRUSTED. */
  readonly trust?: TrustPolicy
  /** Every command must be signed: one that is not is UNSIGNED_COMMAND. */
  readonly requireSigned?: boolean
  /**
   * The signed note `expectHead` came from (src/events/signed-note.ts): its signatures are judged
   * against `trust`, at the time of the event it names.
   */
  readonly signedHead?: SignedHead
}

/** Verifies a case directory. Problems with the case are findings; only IO trouble is a failure. */
export const verifyCase = (dir: string, options: VerifyOptions = {}): Promise<VerifyReport> =>
  coded('verify', () => verifyImpl(dir, options))

/**
 * Lists a case package without reading a file: its object files (by digest), and a finding for
 * every entry that is not its own (FOREIGN_FILE) or is a leftover (LOCK_PRESENT, RUN_PRESENT,
 * TEMP_FILE_LEFTOVER) pushed to `extra`. Verify walks it; export refuses what it would leave out.
 */
export const listPackage = async (root: string, extra: Finding[]): Promise<Array<{ rel: string; digest: string }>> => {
  let objectsDir = false
  const entries = await fsp.readdir(root, { withFileTypes: true })
  for (const ent of entries) {
    const name = ent.name
    if (name === DECLARATION_FILE || name === LOG_FILE || name === HEAD_FILE) {
      if (!ent.isFile()) extra.push(finding('FOREIGN_FILE', `${name} is not a regular file`, { path: name }))
    } else if (name === OBJECTS_DIR && ent.isDirectory()) {
      objectsDir = true
    } else if (name === OBJECTS_DIR) {
      // A link (or another file) in its place is not walked through: the objects outside the case
      // are none of its own, and every object the log references is then missing.
      extra.push(notOwnDirectory(name))
    } else if (name === LOCK_FILE && ent.isFile()) {
      extra.push(finding('LOCK_PRESENT', 'a writer holds the case, or crashed while holding it', { path: name }))
    } else if (name === RUN_FILE && ent.isFile()) {
      extra.push(finding('RUN_PRESENT', 'a process advances the case, or was killed while it did', { path: name }))
    } else if (name === SUMMARY_FILE && ent.isFile()) {
      // the listing's cache, not part of the package (src/adapters/case-store/summary.ts)
    } else if (name.startsWith(TEMP_PREFIX) && ent.isFile()) {
      extra.push(finding('TEMP_FILE_LEFTOVER', 'temporary file left by an interrupted write', { path: name }))
    } else {
      extra.push(finding('FOREIGN_FILE', `${name} does not belong to a case package`, { path: name }))
    }
  }
  const objectsPath = path.join(root, OBJECTS_DIR)
  const objectFiles: Array<{ rel: string; digest: string }> = []
  // Listed synchronously, ~20 us a directory: a promise each waited for the IO threads and then for
  // the event loop, 257 times, while the log scan held the thread and the other core was busy.
  const listDir = (d: string): Dirent[] => {
    try {
      return readdirSync(d, { withFileTypes: true })
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return []
      throw e
    }
  }
  for (const algo of objectsDir ? listDir(objectsPath) : []) {
    const algoRel = `${OBJECTS_DIR}/${algo.name}`
    if (algo.name !== 'sha256' || !algo.isDirectory()) {
      extra.push(finding('FOREIGN_FILE', `${algoRel} does not belong to a case package`, { path: algoRel }))
      continue
    }
    for (const shard of listDir(path.join(objectsPath, 'sha256'))) {
      const shardRel = `${algoRel}/${shard.name}`
      if (!HEX2.test(shard.name) || !shard.isDirectory()) {
        extra.push(finding('FOREIGN_FILE', `${shardRel} does not belong to a case package`, { path: shardRel }))
        continue
      }
      for (const obj of listDir(path.join(objectsPath, 'sha256', shard.name))) {
        const rel = `${shardRel}/${obj.name}`
        if (!HEX62.test(obj.name) || !obj.isFile()) {
          extra.push(finding('FOREIGN_FILE', `${rel} is not an object file`, { path: rel }))
          continue
        }
        objectFiles.push({ rel, digest: `sha256:${shard.name}${obj.name}` })
      }
    }
  }
  objectFiles.sort((a, b) => (a.rel < b.rel ? -1 : 1))
  return objectFiles
}

/** Checks that every file belongs to the package and hashes every object file. */
const walkPackage = async (
  root: string,
  extra: Finding[],
  progress: (done: number, total: number) => void,
  keep: boolean
): Promise<{
  present: Map<string, number>
  /** The bytes of small objects that hash to their names (see KEPT_OBJECT). */
  kept: Map<string, Buffer>
  objectFiles: Array<{ rel: string; digest: string }>
  objectBytes: number
}> => {
  const present = new Map<string, number>()
  const kept = new Map<string, Buffer>()
  let keptBytes = 0
  let objectBytes = 0
  const objectFiles = await listPackage(root, extra)
  let hashed = 0
  await forEachYielding(objectFiles, async ({ rel, digest }) => {
    progress(++hashed, objectFiles.length)
    let actual: Awaited<ReturnType<typeof hashFile>>
    try {
      actual = await hashFile(path.join(root, rel), rel, keep && keptBytes < KEPT_BYTES)
    } catch (e) {
      // Swapped for a link or a FIFO since it was listed: not an object file.
      if (!isFileRefusal(e)) throw e
      extra.push(finding('FOREIGN_FILE', `${rel} is not an object file (${e.failure.code})`, { path: rel }))
      return
    }
    present.set(digest, actual.size)
    objectBytes += actual.size
    if (actual.digest !== digest) {
      extra.push(finding('OBJECT_DIGEST_MISMATCH', `${rel} does not hash to its name`, { path: rel, data: { digest } }))
    } else if (actual.bytes !== null && keptBytes + actual.size <= KEPT_BYTES) {
      kept.set(digest, actual.bytes)
      keptBytes += actual.size
    }
  })
  return { present, kept, objectFiles, objectBytes }
}

const verifyImpl = async (dir: string, options: VerifyOptions): Promise<VerifyReport> => {
  const root = path.resolve(dir)
  const extra: Finding[] = []
  const startedWorkers = await startLineWorkersFor(path.join(root, LOG_FILE), {
    ...optional('parallelFromBytes', options.parallelFromBytes)
  })
  const watch = verifyWatch(options, extra)
  const { referenced } = watch
  let scan: ScanResult
  let objects: Awaited<ReturnType<typeof walkPackage>>
  try {
    await ensureCaseDir(root)
    // The log scan (main thread plus a line worker) and the object walk (libuv's IO threads)
    // share nothing until the end, so they run at the same time.
    ;[scan, objects] = await Promise.all([
      scanCase(root, {
        ...watch.scanOptions,
        ...optional('parallelFromBytes', options.parallelFromBytes),
        startedWorkers,
        onProgress: (done, total) => options.onProgress?.('log', done, total)
      }),
      // Without the rules nothing reads the objects' contents, and beside a log read on line
      // workers the rules read few of them: no bytes are kept (see KEPT_OBJECT).
      walkPackage(
        root,
        extra,
        (done, total) => options.onProgress?.('objects', done, total),
        options.rules !== false && startedWorkers === null
      )
    ])
  } finally {
    await startedWorkers?.stop()
  }
  const { present, kept, objectFiles, objectBytes } = objects
  for (const [digest, size] of [...referenced.entries()].sort()) {
    const actual = present.get(digest)
    const rel = objectPath(digest)
    if (actual === undefined)
      extra.push(finding('OBJECT_MISSING', `referenced object ${digest} is missing`, { path: rel, data: { digest } }))
    else if (actual !== size)
      extra.push(
        finding('OBJECT_SIZE_MISMATCH', `${rel} has ${actual} bytes, referenced with ${size}`, {
          path: rel,
          data: { digest }
        })
      )
  }
  for (const { rel, digest } of objectFiles) {
    if (!referenced.has(digest))
      extra.push(
        finding('ORPHAN_OBJECT', 'object is referenced by no acknowledged event (left by an interrupted append)', {
          path: rel
        })
      )
  }
  // The rules' checks of object contents, over objects whose bytes match their names.
  const damaged = new Set(extra.filter((f) => f.code === 'OBJECT_DIGEST_MISMATCH').map((f) => f.data?.['digest']))
  // An object the walk did not keep is read again for the rules, and believed only while it still
  // hashes to its name: a file swapped after the walk hashed it (another prompt, capture or answer
  // than the one the log names) is a finding, never judged by its new bytes.
  const changed = new Set<string>()
  const read = (ref: ObjectRefLite): Uint8Array | undefined => {
    if (present.get(ref.digest) !== ref.size || damaged.has(ref.digest)) return undefined
    const bytes = kept.get(ref.digest)
    if (bytes !== undefined) return bytes
    const rel = objectPath(ref.digest)
    let again: Buffer | null = null
    try {
      again = readRegularSync(path.join(root, rel), { maxBytes: ref.size })
    } catch {
      // gone, or no longer a regular file: below
    }
    if (again !== null && again.length === ref.size && sha256Digest(again) === ref.digest) return again
    if (!changed.has(ref.digest)) {
      changed.add(ref.digest)
      extra.push(
        again === null
          ? finding(
              'OBJECT_MISSING',
              `${rel} could not be read again while the case was verified (gone, not a regular file, or grown)`,
              {
                path: rel,
                data: { digest: ref.digest }
              }
            )
          : finding(
              'OBJECT_DIGEST_MISMATCH',
              `${rel} changed while the case was verified: it no longer hashes to its name`,
              {
                path: rel,
                data: { digest: ref.digest }
              }
            )
      )
    }
    return undefined
  }
  return watch.report(scan, read, { objects: objectFiles.length, objectBytes, logBytes: scan.fileBytes })
}
