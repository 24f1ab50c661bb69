/**
 * `vba export`: a case as a BagIt 1.0 bag, packed as a deterministic tar (or written as a
 * directory). Payload files are hashed (SHA-256 and SHA-512) while they are written; an object
 * whose bytes do not match its name stops the export (CASE_CORRUPT). The output appears
 * atomically: written to a temporary name next to it, fsynced, then renamed.
 */
import { promises as fsp } from 'node:fs'
import { createHash, type Hash } from 'node:crypto'
import * as path from 'node:path'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import tar from 'tar-stream'
import { failure } from '../../failures/failure.js'
import { errnoOf, writeAll } from '../fs-util.js'
import { FailureError, coded } from '../../failures/error.js'
import { createStagingFile, prepareOutput, publishOutput, stagingBeside } from '../output.js'
import { isFileRefusal, openRegular, readRegularSync } from '../regular-file.js'
import { BAGIT_TXT, bagInfo, caseView, manifest, type CaseView, type PayloadFile } from './case-bag.js'
import { locate } from '../case-store/directory-store.js'
import type { CaseAt } from '../case-store/store.js'
import { makeDirs } from '../make-dirs.js'

/**
 * What an export wrote: the case and generation, payload files and bytes, and for a tar its SHA-256.
 * @category transport
 */
export interface ExportReport {
  readonly case_id: string
  readonly generation: number
  readonly files: number
  readonly payload_bytes: number
  /** SHA-256 of the archive (tar output only). */
  readonly archive_sha256: string | null
}

/** @category transport */
export interface ExportOptions {
  readonly format?: 'tar' | 'dir'
  /** Replace an existing regular file at `out` (tar output only; never a link, device or directory). */
  readonly force?: boolean
  readonly onProgress?: (doneBytes: number, totalBytes: number) => void
}

const corruptObject = (p: PayloadFile): FailureError =>
  new FailureError(
    failure('CASE_CORRUPT', `data/${p.path} does not hash to its name`, {
      findings: [
        { code: 'OBJECT_DIGEST_MISMATCH', severity: 'error', message: 'object does not hash to its name', path: p.path }
      ]
    })
  )

const missingObject = (p: PayloadFile): FailureError =>
  new FailureError(
    failure('CASE_CORRUPT', `data/${p.path} is missing`, {
      findings: [{ code: 'OBJECT_MISSING', severity: 'error', message: 'referenced object is missing', path: p.path }]
    })
  )

type Source = { readonly bytes: Buffer } | { readonly chunks: AsyncIterable<Buffer> }

interface Sink {
  /** Adds one file: bytes in memory, or chunks to stream. */
  readonly add: (name: string, size: number, source: Source) => Promise<void>
  readonly finish: () => Promise<void>
}

/** Files up to this size are read in one call. */
const SMALL_FILE = 4 << 20

/** A payload file in chunks of 1 MiB (a fresh buffer each: the tar stream keeps them queued). */
async function* fileChunks(file: string, shown: string): AsyncIterable<Buffer> {
  const { fh } = await openRegular(file, { shown })
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(1 << 20)
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) return
      yield bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead)
    }
  } finally {
    await fh.close()
  }
}

/** Streams the bag of `view` into `sink`: tag files, payload (hashed on the way), manifests. */
export const writeBag = async (
  view: CaseView,
  sink: Sink,
  onProgress?: (done: number, total: number) => void
): Promise<{ files: number; bytes: number }> => {
  const info = Buffer.from(bagInfo(view))
  const bagit = Buffer.from(BAGIT_TXT)
  await sink.add('bag-info.txt', info.length, { bytes: info })
  await sink.add('bagit.txt', bagit.length, { bytes: bagit })
  const sums: Record<'sha256' | 'sha512', Array<[string, string]>> = { sha256: [], sha512: [] }
  const total = view.payload.reduce((s, f) => s + f.size, 0)
  let done = 0
  for (const p of view.payload) {
    const h256: Hash = createHash('sha256')
    const h512: Hash = createHash('sha512')
    let size = 0
    let whole: Buffer | undefined
    try {
      // Small files are read whole and synchronously: a few syscalls, where the promise-based read
      // costs more in bookkeeping than the read itself (10,000 objects: 1.5 s → 1.0 s). The tar
      // stream still drains asynchronously between files. Large files are streamed.
      whole =
        p.bytes ??
        (p.load !== undefined ? await p.load() : undefined) ??
        (p.file !== undefined && p.size <= SMALL_FILE
          ? readRegularSync(p.file, { maxBytes: p.size + 1, shown: `data/${p.path}` })
          : undefined)
    } catch (e) {
      if (isFileRefusal(e)) throw corruptObject(p)
      if (errnoOf(e) === 'ENOENT') throw missingObject(p)
      throw e
    }
    if (whole !== undefined) {
      h256.update(whole)
      h512.update(whole)
      size = whole.length
      await sink.add(`data/${p.path}`, p.size, { bytes: whole })
    } else {
      const source: AsyncIterable<Buffer> =
        p.stream !== undefined
          ? p.stream()
          : p.file === undefined
            ? (async function* () {})()
            : fileChunks(p.file, `data/${p.path}`)
      async function* hashed(): AsyncIterable<Buffer> {
        try {
          for await (const chunk of source) {
            h256.update(chunk)
            h512.update(chunk)
            size += chunk.length
            yield chunk
          }
        } catch (e) {
          // An object replaced by a link, a FIFO or a device is not the object the log names.
          throw isFileRefusal(e) ? corruptObject(p) : errnoOf(e) === 'ENOENT' ? missingObject(p) : e
        }
      }
      await sink.add(`data/${p.path}`, p.size, { chunks: hashed() })
    }
    const s256 = h256.digest('hex')
    if (size !== p.size || (p.expectSha256 !== undefined && s256 !== p.expectSha256)) throw corruptObject(p)
    sums.sha256.push([`data/${p.path}`, s256])
    sums.sha512.push([`data/${p.path}`, h512.digest('hex')])
    done += size
    onProgress?.(done, total)
  }
  const tags: Array<[string, Buffer]> = [
    ['bag-info.txt', info],
    ['bagit.txt', bagit]
  ]
  for (const algo of ['sha256', 'sha512'] as const) {
    const m = Buffer.from(manifest(sums[algo]))
    await sink.add(`manifest-${algo}.txt`, m.length, { bytes: m })
    tags.push([`manifest-${algo}.txt`, m])
  }
  for (const algo of ['sha256', 'sha512'] as const) {
    const tm = Buffer.from(
      manifest(tags.map(([name, bytes]) => [name, createHash(algo).update(bytes).digest('hex')] as const))
    )
    await sink.add(`tagmanifest-${algo}.txt`, tm.length, { bytes: tm })
  }
  await sink.finish()
  return { files: view.payload.length, bytes: total }
}

/**
 * A tar sink: sorted entries already come in order; fixed owner, mode and time. Every byte of the
 * archive goes to `write` (awaited, so a failing write, such as a full disk, ends the export with
 * its error instead of an unhandled stream error).
 */
export const tarSink = (
  root: string,
  mtime: Date,
  write: (chunk: Buffer) => Promise<void>
): { sink: Sink; sha256: () => string } => {
  const pack = tar.pack()
  const hash = createHash('sha256')
  const tee = new Writable({
    write(chunk: Buffer, _enc, cb) {
      hash.update(chunk)
      write(chunk).then(() => cb(), cb)
    }
  })
  const piping = pipeline(pack, tee)
  // Rejects when a write failed (the packer is then destroyed and its callbacks may never come):
  // every add races it, so an export ends with the write's error instead of waiting forever.
  const failed = piping.then(() => new Promise<never>(() => undefined))
  failed.catch(() => undefined)
  const entry = (header: Parameters<typeof pack.entry>[0], source: Source): Promise<void> => {
    if ('bytes' in source)
      return new Promise<void>((resolve, reject) =>
        pack.entry(header, source.bytes, (err) => (err ? reject(err) : resolve()))
      )
    return new Promise<void>((resolve, reject) => {
      const stream = pack.entry(header, (err) => (err ? reject(err) : resolve()))
      // Its errors are the packer's, and reach the pipeline; none is left unheard.
      stream.on('error', () => undefined)
      void (async () => {
        try {
          for await (const chunk of source.chunks)
            if (!stream.write(chunk)) await new Promise<void>((r) => stream.once('drain', () => r()))
          stream.end(Buffer.alloc(0))
        } catch (e) {
          stream.destroy(e as Error)
          reject(e)
        }
      })()
    })
  }
  const sink: Sink = {
    add: async (name, size, source) => {
      const header = {
        name: `${root}/${name}`,
        size,
        mode: 0o644,
        mtime,
        uid: 0,
        gid: 0,
        uname: '',
        gname: '',
        type: 'file' as const
      }
      await Promise.race([entry(header, source), failed])
    },
    finish: async () => {
      pack.finalize()
      await piping
    }
  }
  return { sink, sha256: () => hash.digest('hex') }
}

/** A directory sink: files written under `root`. */
const dirSink = (root: string): Sink => ({
  add: async (name, _size, source) => {
    const file = path.join(root, name)
    await makeDirs(path.dirname(file))
    if ('bytes' in source) await fsp.writeFile(file, source.bytes, { flag: 'wx' })
    else {
      const fh = await fsp.open(file, 'wx')
      try {
        for await (const chunk of source.chunks) await writeAll(fh, chunk)
        await fh.sync()
      } finally {
        await fh.close()
      }
    }
  },
  finish: async () => undefined
})

/** Bytes gathered before one write: a bag is many small entries, and a write per tar block cost more than the bytes. */
const OUTPUT_BUFFER = 8 << 20

/** Writes through `fh` in large pieces (each awaited, so a failing write ends the export with its error). */
const buffered = (fh: fsp.FileHandle): { write: (chunk: Buffer) => Promise<void>; flush: () => Promise<void> } => {
  const buf = Buffer.allocUnsafe(OUTPUT_BUFFER)
  let used = 0
  const flush = async (): Promise<void> => {
    if (used === 0) return
    const n = used
    used = 0
    await writeAll(fh, buf.subarray(0, n))
  }
  const write = async (chunk: Buffer): Promise<void> => {
    if (used + chunk.length > buf.length) await flush()
    if (chunk.length >= buf.length) return writeAll(fh, chunk)
    chunk.copy(buf, used)
    used += chunk.length
  }
  return { write, flush }
}

/**
 * Exports a case (a directory, or a case in a store) to `out`: a tar file, or a directory with
 * format 'dir'. Written beside `out` under a staging name and renamed into place (see output.ts):
 * a failed export (a full disk, a file size limit) leaves nothing, and an existing output is
 * refused unless `force` (which replaces a regular file only).
 */
export const exportCase = (at: CaseAt, out: string, options: ExportOptions = {}): Promise<ExportReport> =>
  coded('export', async () => {
    const target = await prepareOutput(out, { force: options.force === true && options.format !== 'dir' })
    const { store, ref } = locate(at)
    const view = await store.view(ref)
    const tmp = stagingBeside(target, 'export')
    try {
      const written =
        options.format === 'dir'
          ? { ...(await writeBag(view, dirSink(tmp), options.onProgress)), sha256: null }
          : await writeTarFile(tmp, view, options.onProgress)
      await publishOutput(tmp, target)
      return {
        case_id: view.caseId,
        generation: view.generation,
        files: written.files,
        payload_bytes: written.bytes,
        archive_sha256: written.sha256
      }
    } catch (e) {
      await fsp.rm(tmp, { recursive: true, force: true })
      throw e
    }
  })

/** Writes the case's bag as a tar file at `file` (synced): its file count, payload bytes and SHA-256. */
const writeTarFile = async (
  file: string,
  view: CaseView,
  onProgress: ExportOptions['onProgress']
): Promise<{ files: number; bytes: number; sha256: string }> => {
  const fh = await createStagingFile(file)
  try {
    const out = buffered(fh)
    const tar = tarSink(view.caseId, view.at, out.write)
    const r = await writeBag(view, tar.sink, onProgress)
    await out.flush()
    await fh.sync()
    return { ...r, sha256: tar.sha256() }
  } finally {
    await fh.close()
  }
}

/** SHA-256 of the archive the case at `dir` would export to (nothing is written). */
export const canonicalArchiveSha256 = async (dir: string): Promise<string> => {
  const view = await caseView(dir)
  const { sink, sha256 } = tarSink(view.caseId, view.at, async () => undefined)
  await writeBag(view, sink)
  return sha256()
}
