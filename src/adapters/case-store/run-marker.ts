/**
 * The run marker of a case directory (`.vba-run`): written by a process while it advances the case
 * (`vba investigate`), holding its pid, host, what it runs and since when, so `vba status` and
 * `vba serve` can say that a process holds the case and who. It is no lock: appends take the
 * writer lock as always. Never part of an export; verify reports it as a notice (RUN_PRESENT).
 */
import { promises as fsp } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { RUN_FILE, TEMP_PREFIX } from './layout.js'
import { errnoOf, processAlive, tempName } from '../fs-util.js'
import { isFileRefusal, readRegular } from '../regular-file.js'
import { FailureError } from '../../failures/error.js'
import { failure } from '../../failures/failure.js'

/** Who advances a case: the process (pid, host), what it runs and since when. @category cases */
export const RunInfo = t.type({ pid: t.number, host: t.string, what: t.string, started_at: t.string, token: t.string })
export type RunInfo = t.TypeOf<typeof RunInfo>

/** @category cases */
export type RunState =
  | { readonly state: 'none' }
  | { readonly state: 'running'; readonly info: RunInfo }
  /** The marker of a process on this host that is not running any more (it was killed). */
  | { readonly state: 'gone'; readonly info: RunInfo }

/** Reads the run marker of the case at `dir` without changing anything. */
export const inspectRun = async (dir: string): Promise<RunState> => {
  let text: string
  try {
    text = (await readRegular(path.join(dir, RUN_FILE), { maxBytes: 64 << 10, shown: RUN_FILE })).toString('utf8')
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || isFileRefusal(e)) return { state: 'none' }
    throw e
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { state: 'none' }
  }
  const info = RunInfo.decode(parsed)
  if (E.isLeft(info)) return { state: 'none' }
  const gone = info.right.host === os.hostname() && !processAlive(info.right.pid)
  return gone ? { state: 'gone', info: info.right } : { state: 'running', info: info.right }
}

/**
 * Marks the case at `dir` as advanced by this process (`what`: the command) and resolves to the
 * function that removes the marker again (only its own: a marker another process wrote meanwhile
 * stays). A live process of this host that advances the case already is CASE_LOCKED: two runs
 * raced each other for every turn, each discarding answers the other had paid for. A marker of
 * another host is replaced (vba cannot tell whether that process runs; appends stay safe).
 */
export const markRun = async (dir: string, what: string): Promise<() => Promise<void>> => {
  const info: RunInfo = {
    pid: process.pid,
    host: os.hostname(),
    what,
    started_at: new Date().toISOString(),
    token: randomBytes(12).toString('hex')
  }
  const tmp = path.join(dir, tempName(`${TEMP_PREFIX}run-`))
  const file = path.join(dir, RUN_FILE)
  await fsp.writeFile(tmp, `${JSON.stringify(info)}\n`, { flag: 'wx' })
  try {
    // Made whole in one step where there is none (link fails when one exists: two runs starting
    // at once cannot both take the case); a marker left by a process that is gone is replaced.
    const taken = await fsp.link(tmp, file).then(
      () => true,
      (e: unknown) => {
        if (errnoOf(e) !== 'EEXIST') throw e
        return false
      }
    )
    if (!taken) {
      const other = await inspectRun(dir)
      if (other.state === 'running' && other.info.host === os.hostname())
        throw new FailureError(
          failure(
            'CASE_LOCKED',
            `${other.info.what} (pid ${other.info.pid} on this host) advances the case since ${other.info.started_at}: a second run would race it for every turn (answers paid for and discarded); wait for it to end, or stop it`,
            { pid: other.info.pid, host: other.info.host, since: other.info.started_at }
          )
        )
      await fsp.rename(tmp, file)
    }
  } finally {
    await fsp.rm(tmp, { force: true })
  }
  return async () => {
    const now = await inspectRun(dir).catch(() => ({ state: 'none' }) as const)
    if (now.state !== 'none' && now.info.token === info.token) await fsp.rm(path.join(dir, RUN_FILE), { force: true })
  }
}

/** The words of a run: who advances the case and since when. */
export const runText = (s: RunState): string | null =>
  s.state === 'none'
    ? null
    : s.state === 'running'
      ? `being advanced by ${s.info.what} (pid ${s.info.pid} on ${s.info.host}) since ${s.info.started_at}`
      : `${s.info.what} (pid ${s.info.pid} on ${s.info.host}) advanced it from ${s.info.started_at} and is gone without finishing (killed?); the next run goes on`
