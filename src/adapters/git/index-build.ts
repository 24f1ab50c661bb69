/**
 * Building the persisted snapshot index of one commit (format: index-format.ts). The main thread
 * reads every blob through the object reader, one at a time, while a second thread
 * (index-writer-worker.ts) checks the stored ones against their ids, writes blobs.dat and derives
 * the filters into their sliced rows (filter-slicer.ts), with at most IN_FLIGHT bytes waiting
 * between the two; at the end it writes filters.dat while this thread writes trees.dat and folded.dat
 * (its rows from the writer).
 * Everything is written into a private directory and published with one rename; a builder that
 * loses the race discards its copy.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import { detachOnce } from '../worker-script.js'
import { ObjectStoreError, mismatch, type ObjectReader } from './object-reader.js'
import { indexDirOf, sweepLeftovers } from './index-cache.js'
import {
  FORMAT,
  STORED,
  VERSION,
  blobFiling,
  filterClasses,
  sha256,
  type BlobRow,
  type FilterClass,
  type IndexFile,
  type ListingRow,
  type StoredObject
} from './index-format.js'
import type { TreeEntry } from './snapshot-index.js'
import type { WriterMessage, WriterReply } from './index-writer-worker.js'
import { chunkDigester, writeAll, writeFileAll } from './index-slices.js'
import { makeDirsSync } from '../make-dirs.js'

/** @category research */
export interface BuildProgress {
  readonly done: number
  readonly total: number
  readonly bytes: number
}

const IN_FLIGHT = 8 << 20
const BATCH = 1 << 20
const yieldNow = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** A build under way: its private directory exists and its writer thread is starting. */
export interface IndexBuild {
  /**
   * Writes the index of the commit's listing (walked meanwhile) and publishes it. Blobs are read
   * one at a time through `reader` (so memory stays bounded) and written straight to disk; the
   * writer thread stops and the private directory goes, whatever the outcome.
   */
  readonly finish: (
    treeObjects: ReadonlyMap<string, StoredObject>,
    entries: readonly TreeEntry[],
    reader: ObjectReader,
    onProgress?: (p: BuildProgress) => void
  ) => Promise<void>
  /** Gives the build up: the writer thread stops, the private directory goes. */
  readonly abandon: () => Promise<void>
}

/**
 * Starts building the index of `commit` before its listing is known, so the writer thread loads
 * its modules while the listing is walked.
 */
export const startIndexBuild = (root: string, commit: string): IndexBuild => {
  detachOnce()
  const base = path.join(root, 'snapshots', `v${VERSION}`)
  makeDirsSync(base)
  sweepLeftovers(root)
  const tmp = path.join(root, 'snapshots', `.build-${commit}-${process.pid}-${randomBytes(4).toString('hex')}`)
  fs.mkdirSync(tmp)
  const writer = startWriter(tmp)
  const abandon = async (): Promise<void> => {
    await writer.terminate()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  return {
    finish: async (treeObjects, entries, reader, onProgress) => {
      try {
        await publish(root, commit, tmp, writer, treeObjects, entries, reader, onProgress)
      } finally {
        await abandon()
      }
    },
    abandon
  }
}

/** Copies the blobs, writes trees.dat and folded.dat while the writer writes filters.dat, then index.json, and renames `tmp` into place. */
const publish = async (
  root: string,
  commit: string,
  tmp: string,
  writer: IndexWriter,
  treeObjects: ReadonlyMap<string, StoredObject>,
  entries: readonly TreeEntry[],
  reader: ObjectReader,
  onProgress?: (p: BuildProgress) => void
): Promise<void> => {
  const copied = await copyBlobs(entries, reader, writer, onProgress)
  const ended = writer.end()
  const trees = writeTrees(tmp, treeObjects)
  const written = await ended
  if (written.filtersBytes !== copied.filtersBytes)
    throw new Error('the index writer wrote an unexpected number of filter bytes')
  onProgress?.({ done: copied.count, total: copied.count, bytes: copied.blobsBytes })
  const body = JSON.stringify({
    format: FORMAT,
    version: VERSION,
    commit,
    blobs_bytes: copied.blobsBytes,
    filters_bytes: copied.filtersBytes,
    filter_classes: copied.classes,
    filters_sha256: written.filtersSha256,
    folded_sha256: written.foldedSha256,
    trees_bytes: trees.bytes,
    trees_sha256: trees.sha256,
    objects: trees.objects,
    listing: entries.map((e): ListingRow => [e.path, e.oid, e.mode]),
    blobs: copied.rows
  } satisfies IndexFile)
  writeFileAll(path.join(tmp, 'index.json'), Buffer.from(`${sha256(body)}\n${body}`))
  try {
    fs.renameSync(tmp, indexDirOf(root, commit))
  } catch (e) {
    const code = (e as { code?: string }).code
    // Another process published the same commit first: its index is as good as ours.
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e
  }
}

/** What the writer thread wrote to filters.dat and folded.dat. */
interface Written {
  readonly filtersSha256: string
  readonly foldedSha256: string
  readonly filtersBytes: number
}

/** The writer thread, and the bytes sent to it that it has not yet acknowledged. */
interface IndexWriter {
  /** Why the writer failed, or null. */
  readonly failed: () => unknown
  /** Sends the first `used` bytes of `batch` (its buffer moves to the writer) with each blob's id, size and filter size. */
  readonly send: (batch: Uint8Array<ArrayBuffer>, used: number, oids: string[], sizes: number[], logs: number[]) => void
  /** True when more than IN_FLIGHT bytes wait: the reader waits for `drained()`. */
  readonly behind: () => boolean
  /** Resolves once at most half of IN_FLIGHT waits (or the writer failed). */
  readonly drained: () => Promise<void>
  /** Ends the stream; resolves with what was written to the filter files, rejects when the writer failed. */
  readonly end: () => Promise<Written>
  /** An empty buffer of BATCH bytes: one the writer gave back, else a new one. */
  readonly batch: () => Uint8Array<ArrayBuffer>
  readonly terminate: () => Promise<number>
}

const startWriter = (dir: string): IndexWriter => {
  const worker = new Worker(new URL('./index-writer-worker.js', import.meta.url), { workerData: { dir } })
  let inFlight = 0
  // Batch buffers the writer gave back, to be filled again (no new buffer of BATCH bytes per batch).
  const spare: Uint8Array<ArrayBuffer>[] = []
  let drained: (() => void) | null = null
  let failed: unknown = null
  let done: ((r: Written) => void) | null = null
  // folded.dat, written here from the rows the writer sends at the end.
  let folded: number | null = null
  const foldedDigests = chunkDigester()
  const fail = (e: unknown, reject: (e: unknown) => void): void => {
    failed ??= e
    drained?.()
    reject(failed)
  }
  const ended = new Promise<Written>((resolve) => {
    done = resolve
  })
  const failure = new Promise<never>((_, reject) => {
    worker.on('error', (e) => fail(e, reject))
    worker.on('exit', (code) => {
      if (code !== 0) fail(new Error(`the index writer stopped (${code})`), reject)
    })
    worker.on('message', (m: WriterReply) => {
      if (m.type === 'ack') {
        inFlight -= m.bytes
        if (m.batch.length === BATCH && spare.length < IN_FLIGHT / BATCH) spare.push(m.batch)
        if (inFlight <= IN_FLIGHT / 2) drained?.()
      } else if (m.type === 'corrupt') fail(new ObjectStoreError('OBJECT_CORRUPT', m.message), reject)
      else
        try {
          folded ??= fs.openSync(path.join(dir, 'folded.dat'), 'w')
          if (m.type === 'folded') {
            writeAll(folded, m.bytes)
            foldedDigests.update(m.bytes)
          } else {
            fs.closeSync(folded)
            done?.({ filtersSha256: m.filtersSha256, foldedSha256: foldedDigests.end(), filtersBytes: m.filtersBytes })
          }
        } catch (e) {
          fail(e, reject)
        }
    })
  })
  failure.catch(() => undefined)
  return {
    failed: () => failed,
    send: (batch, used, oids, sizes, logs) => {
      worker.postMessage({ type: 'blobs', bytes: batch, used, oids, sizes, logs } satisfies WriterMessage, [
        batch.buffer
      ])
      inFlight += used
    },
    behind: () => inFlight > IN_FLIGHT,
    drained: async () => {
      await new Promise<void>((resolve) => {
        drained = resolve
      })
      drained = null
    },
    end: () => {
      worker.postMessage({ type: 'end' } satisfies WriterMessage)
      return Promise.race([ended, failure])
    },
    batch: () => spare.pop() ?? new Uint8Array(BATCH),
    terminate: () => worker.terminate()
  }
}

/** The blob rows of index.json and the sizes of blobs.dat and filters.dat. */
interface Copied {
  readonly rows: Record<string, BlobRow>
  readonly blobsBytes: number
  readonly filtersBytes: number
  readonly classes: FilterClass[]
  /** How many distinct blobs the listing names. */
  readonly count: number
}

/**
 * Reads every blob of the listing once, describes it in a row, and sends the text blobs up to
 * STORE_LIMIT to the writer in batches; the writer checks those against their ids, this thread
 * every other object.
 */
const copyBlobs = async (
  entries: readonly TreeEntry[],
  reader: ObjectReader,
  writer: IndexWriter,
  onProgress?: (p: BuildProgress) => void
): Promise<Copied> => {
  const rows: Record<string, BlobRow> = {}
  let blobsBytes = 0
  // The filter size of every stored blob in order; a blob's slot is its rank among those of its size.
  const logs: number[] = []
  const slots = new Map<number, number>()
  const oids = [...new Set(entries.filter((e) => e.kind === 'blob').map((e) => e.oid))]
  // Each delta base is then kept exactly as long as a blob still to be read needs it.
  reader.plan(oids)
  let last = Date.now()
  let batch = writer.batch()
  let batchUsed = 0
  let batchLogs: number[] = []
  let batchSizes: number[] = []
  let batchOids: string[] = []
  const flush = (): void => {
    if (batchUsed === 0) return
    writer.send(batch, batchUsed, batchOids, batchSizes, batchLogs)
    batch = writer.batch()
    batchUsed = 0
    batchLogs = []
    batchSizes = []
    batchOids = []
  }
  for (let i = 0; i < oids.length; i++) {
    if (writer.failed() !== null) throw writer.failed()
    const oid = oids[i] as string
    const o = reader.readUnchecked(oid)
    const bytes = o === null || o.type !== 'blob' ? null : o.content
    const { flags, log } = blobFiling(bytes)
    if (bytes === null || flags !== STORED) {
      const wrong = o === null ? null : mismatch(oid, o)
      if (wrong !== null) throw wrong
      rows[oid] = [bytes?.length ?? 0, flags, 0, 0, 0]
      continue
    }
    const slot = slots.get(log) ?? 0
    slots.set(log, slot + 1)
    logs.push(log)
    rows[oid] = [bytes.length, STORED, blobsBytes, slot, log]
    // Copied into a batch of its own (the reader's cache keeps the original) that moves to the writer.
    if (batchUsed + bytes.length > batch.length) flush()
    if (bytes.length > batch.length) batch = new Uint8Array(bytes.length)
    batch.set(bytes, batchUsed)
    batchUsed += bytes.length
    batchLogs.push(log)
    batchSizes.push(bytes.length)
    batchOids.push(oid)
    blobsBytes += bytes.length
    if (writer.behind()) await writer.drained()
    if (Date.now() - last > 50) {
      // Keep the event loop responsive (lease renewals, servers) while a large index builds.
      onProgress?.({ done: i + 1, total: oids.length, bytes: blobsBytes })
      await yieldNow()
      last = Date.now()
    }
  }
  flush()
  const { classes, bytes: filtersBytes } = filterClasses(logs)
  return { rows, blobsBytes, filtersBytes, classes, count: oids.length }
}

/** Writes the commit and tree objects one after another to trees.dat; where each one is. */
const writeTrees = (
  dir: string,
  treeObjects: ReadonlyMap<string, StoredObject>
): { readonly objects: IndexFile['objects']; readonly bytes: number; readonly sha256: string } => {
  const objects: IndexFile['objects'] = {}
  const parts: Buffer[] = []
  let bytes = 0
  for (const [oid, o] of treeObjects) {
    objects[oid] = [o.type, bytes, o.content.length]
    parts.push(o.content)
    bytes += o.content.length
  }
  const trees = Buffer.concat(parts)
  writeFileAll(path.join(dir, 'trees.dat'), trees)
  return { objects, bytes, sha256: sha256(trees) }
}
