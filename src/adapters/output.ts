/**
 * Where the library writes files a person names (`vba export OUT`, `vba report --out FILE`): into
 * a directory that must exist (OUTPUT_DIR_MISSING otherwise), through a new staging file created
 * exclusively beside the output (O_EXCL, O_NOFOLLOW), fsynced, then renamed over it. An existing
 * output is refused (OUTPUT_EXISTS) unless `force`, and even then only a regular file is
 * replaced: a symlink, a device or a directory never is (so `--out /dev/stdout` run as root
 * cannot replace the system's link). The rename replaces a name, never writes through a link.
 */
import { constants as fsc, promises as fsp, type Stats } from 'node:fs'
import * as path from 'node:path'
import { failure } from '../failures/failure.js'
import { errnoOf, fsyncDir, writeAll } from './fs-util.js'
import { FailureError } from '../failures/error.js'
import { stagingName, sweepStaging } from './staging.js'

export interface OutputOptions {
  /** Replace an existing regular file (default false: an existing output is refused). */
  readonly force?: boolean
  /** How the output is named in messages (default: as given). */
  readonly shown?: string
}

const refuse = (code: 'OUTPUT_EXISTS' | 'OUTPUT_DIR_MISSING', message: string, out: string): FailureError =>
  new FailureError(failure(code, message, { out }))

/**
 * Checks that `out` may be written (see the module comment), sweeps staging leftovers of killed
 * writers beside it, and returns its absolute path.
 */
export const prepareOutput = async (out: string, options: OutputOptions = {}): Promise<string> => {
  const shown = options.shown ?? out
  const target = path.resolve(out)
  const dir = path.dirname(target)
  try {
    if (!(await fsp.stat(dir)).isDirectory())
      throw refuse('OUTPUT_DIR_MISSING', `${path.dirname(shown)} is not a directory`, shown)
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR')
      throw refuse('OUTPUT_DIR_MISSING', `the directory of ${shown} does not exist; create it first`, shown)
    throw e
  }
  let existing: Stats | null
  try {
    existing = await fsp.lstat(target)
  } catch (e) {
    if (errnoOf(e) !== 'ENOENT') throw e
    existing = null
  }
  if (existing !== null) {
    if (options.force !== true)
      throw refuse('OUTPUT_EXISTS', `${shown} exists; choose a new name (or --force to replace a regular file)`, shown)
    if (!existing.isFile())
      throw refuse(
        'OUTPUT_EXISTS',
        `${shown} exists and is not a regular file (a link, device or directory); it is never replaced`,
        shown
      )
  }
  await sweepStaging(dir)
  return target
}

/** A new staging name beside `target`. */
export const stagingBeside = (target: string, label: 'export' | 'report'): string =>
  path.join(path.dirname(target), stagingName(label, path.basename(target)))

/** Creates a new staging file for writing: exclusive, never through a link. */
export const createStagingFile = (file: string): Promise<fsp.FileHandle> =>
  fsp.open(file, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o644)

/** Moves a finished staging file or directory onto `target` and makes the rename durable. */
export const publishOutput = async (staging: string, target: string): Promise<void> => {
  await fsp.rename(staging, target)
  await fsyncDir(path.dirname(target))
}

/**
 * Writes `bytes` as the output `out` (see the module comment). A failed write (a full disk, a file
 * size limit) removes the staging file and leaves any previous output untouched.
 */
export const writeOutputFile = async (
  out: string,
  bytes: Uint8Array | string,
  label: 'export' | 'report',
  options: OutputOptions = {}
): Promise<string> => {
  const target = await prepareOutput(out, options)
  const staging = stagingBeside(target, label)
  const fh = await createStagingFile(staging)
  try {
    await writeAll(fh, typeof bytes === 'string' ? Buffer.from(bytes) : bytes)
    await fh.sync()
    await fh.close()
    await publishOutput(staging, target)
  } catch (e) {
    await fh.close().catch(() => undefined)
    await fsp.rm(staging, { force: true })
    throw e
  }
  return target
}
