/**
 * An evaluation suite: a folder with one folder per bug, each holding the report (`report.*`:
 * anything `case prepare --input` reads) and `truth.json`: the commit investigated and what the fix
 * changed, either as the fix commit (the changed files and line ranges are then derived from git:
 * the hunks of `commit..fix_commit`, as lines of `commit`) or listed as `changed`. The JSON Schema
 * is eval/suite.schema.json.
 */
import { execFile } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import { promisify } from 'node:util'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure } from '../failures/failure.js'
import { FailureError, fail } from '../failures/error.js'
import { describeErrors } from '../events/decode.js'
import { parseBoundedJson } from '../events/bounds.js'
import { EntityRef } from '../domain/enrichment-config.js'
import { ReportOrigin } from '../events/catalog.js'
import { patternString, schemaHints } from '../events/codecs.js'
import { objectHints, schemaDocument, type JsonSchema } from '../events/json-schema.js'
import { readRegular } from '../adapters/regular-file.js'
import { checkSourcePath } from '../domain/source-paths.js'

const run = promisify(execFile)

const FullCommit = patternString('FullCommit', /^[0-9a-f]{40}$/)
const LineRange = t.refinement(
  t.tuple([t.number, t.number]),
  ([a, b]) => Number.isSafeInteger(a) && Number.isSafeInteger(b) && a >= 1 && b >= a,
  'LineRange'
)
schemaHints.set(LineRange, {
  type: 'array',
  description: 'first and last line, inclusive (first <= last)',
  prefixItems: [
    { type: 'integer', minimum: 1 },
    { type: 'integer', minimum: 1 }
  ],
  minItems: 2,
  maxItems: 2
})
/** A bug's id: the folder name, and the case's id (letters, digits, `.`, `_`, `-`; at most 64). */
const BugId = patternString('BugId', /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/)

/** One changed place: a file and an inclusive line range at the investigated commit. */
export const ChangedRange = t.type({ path: t.string, lines: LineRange }, 'ChangedRange')
export type ChangedRange = t.TypeOf<typeof ChangedRange>

/** truth.json. */
export const Truth = t.intersection(
  [
    t.type({ commit: FullCommit }),
    t.partial({
      fix_commit: FullCommit,
      changed: t.array(ChangedRange),
      entities: t.array(EntityRef),
      id: BugId,
      title: t.string,
      /** The public issue the report comes from (recorded as the report's origin). */
      issue: ReportOrigin
    })
  ],
  'Truth'
)
objectHints.set(Truth, {
  additionalProperties: false,
  oneOf: [{ required: ['fix_commit'] }, { required: ['changed'] }]
})
export type Truth = t.TypeOf<typeof Truth>

/** The JSON Schema of truth.json (eval/truth.schema.json is this, written by npm run schemas). */
export const truthSchema = (): JsonSchema =>
  schemaDocument(
    'https://vba.invalid/eval/v1/truth.schema.json',
    'truth.json',
    Truth,
    'The truth of one bug of an evaluation suite: the commit investigated and what the fix changed (fix_commit, or the changed ranges), with optional entities, id, title and the public issue.'
  )

/** One bug of a suite, as read from its folder. */
export interface Bug {
  readonly id: string
  readonly dir: string
  readonly reportFile: string
  readonly truth: Truth
}

/** The most bytes of a truth.json read. */
const TRUTH_MAX_BYTES = 1 << 20

/**
 * The text of a suite's file `file` (shown as `shown`): a regular file of the suite itself, never
 * followed through a symbolic link (a suite is shared input: a link to a secret would put the
 * secret into a case, its prompts and its published report).
 */
const suiteText = async (file: string, shown: string, maxBytes: number): Promise<string> => {
  try {
    return (await readRegular(file, { maxBytes, shown })).toString('utf8')
  } catch (e) {
    if (e instanceof FailureError)
      return fail('INPUT_INVALID', `${e.failure.message} (a suite's files are its own regular files)`, {
        cause: e.failure.code
      })
    return fail('INPUT_INVALID', `cannot read ${shown}`)
  }
}

/** Reads and checks truth.json of one bug folder (`shown`: its name in messages). */
const readTruth = async (file: string, shown = file): Promise<Truth> => {
  const text = await suiteText(file, shown, TRUTH_MAX_BYTES)
  const parsed = parseBoundedJson(text)
  if (E.isLeft(parsed)) return fail('INPUT_INVALID', `${file}: ${parsed.left}`)
  const d = Truth.decode(parsed.right)
  if (E.isLeft(d)) return fail('INPUT_INVALID', `${file}: ${describeErrors(d.left)}`)
  const truth = d.right
  const known = ['commit', 'fix_commit', 'changed', 'entities', 'id', 'title', 'issue']
  const extra = Object.keys(parsed.right as object).find((k) => !known.includes(k))
  if (extra !== undefined) return fail('INPUT_INVALID', `${file}: unknown member ${JSON.stringify(extra.slice(0, 40))}`)
  if ((truth.fix_commit === undefined) === (truth.changed === undefined))
    return fail('INPUT_INVALID', `${file}: name either fix_commit or changed, not both and not neither`)
  if (truth.changed !== undefined && truth.changed.length === 0)
    return fail('INPUT_INVALID', `${file}: changed lists no place`)
  // A changed path is a path in the repository, as a source query names one (relative, normalised);
  // that it is a file at the commit, and its ranges within its lines, is checked against the
  // repository (changedOf).
  for (const c of truth.changed ?? []) {
    const p = checkSourcePath('path', c.path)
    if (E.isLeft(p))
      return fail('INPUT_INVALID', `${file}: changed: ${p.left.message} (${JSON.stringify(c.path.slice(0, 80))})`)
  }
  return truth
}

/** The bugs of a suite folder, sorted by id; every folder must hold one report.* and truth.json. */
export const readSuite = async (suiteDir: string): Promise<Bug[]> => {
  const root = path.resolve(suiteDir)
  const entries = await fsp
    .readdir(root, { withFileTypes: true })
    .catch(() => fail('INPUT_INVALID', `${suiteDir} is not a readable folder`))
  const bugs: Bug[] = []
  // A link in place of a bug folder would be left out of the counts, or read from elsewhere: refused.
  const links = entries.filter((e) => e.isSymbolicLink() && !e.name.startsWith('.'))
  const folderLinks = await Promise.all(
    links.map((e) =>
      fsp
        .stat(path.join(root, e.name))
        .then((st) => st.isDirectory())
        .catch(() => false)
    )
  )
  // (a link to a file beside the bug folders, a README, is no bug and is left alone)
  const link = links.find((_, i) => folderLinks[i] === true)
  if (link !== undefined)
    fail('INPUT_INVALID', `${link.name} is a symbolic link: a suite holds its bug folders itself`, { file: link.name })
  // Hidden folders (.git of a suite kept in git) are not bugs.
  const folders = entries.filter((e) => e.isDirectory() && !e.name.startsWith('.'))
  for (const entry of folders.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const dir = path.join(root, entry.name)
    const files = await fsp.readdir(dir)
    const reports = files.filter((f) => /^report\.[A-Za-z0-9]+$/.test(f))
    if (!files.includes('truth.json')) fail('INPUT_INVALID', `${entry.name}: no truth.json`)
    if (reports.length !== 1)
      fail('INPUT_INVALID', `${entry.name}: ${reports.length === 0 ? 'no report.*' : 'more than one report.*'}`)
    const reportShown = `${entry.name}/${reports[0] as string}`
    // The report is read by case prepare later: it must be the suite's own regular file.
    const st = await fsp.lstat(path.join(dir, reports[0] as string))
    if (!st.isFile())
      fail(
        'INPUT_INVALID',
        `${reportShown} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}: a suite's files are its own regular files`,
        { file: reportShown }
      )
    const truth = await readTruth(path.join(dir, 'truth.json'), `${entry.name}/truth.json`)
    const id = truth.id ?? entry.name
    if (E.isLeft(BugId.decode(id))) fail('INPUT_INVALID', `${entry.name}: the id ${JSON.stringify(id)} is not a bug id`)
    bugs.push({ id, dir, reportFile: path.join(dir, reports[0] as string), truth })
  }
  if (bugs.length === 0) fail('INPUT_INVALID', `${suiteDir} holds no bug folder`)
  const ids = new Set<string>()
  for (const b of bugs) {
    if (ids.has(b.id)) fail('INPUT_INVALID', `two bugs have the id ${b.id}`)
    ids.add(b.id)
  }
  return bugs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

/**
 * The changed ranges of `git diff commit fix_commit` as lines of `commit`: a hunk that removes or
 * replaces lines is those lines; one that only adds lines is the line before and after the point
 * of insertion; a file the fix adds is left out (it is not at the investigated commit).
 */
export const parseDiffRanges = (diff: string): ChangedRange[] => {
  const out: ChangedRange[] = []
  let file: string | null = null
  for (const line of diff.split('\n')) {
    if (line.startsWith('--- ')) {
      const p = line.slice(4)
      file = p === '/dev/null' ? null : p.replace(/^a\//, '')
      continue
    }
    const h = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/.exec(line)
    if (h === null || file === null) continue
    const start = Number(h[1])
    const count = h[2] === undefined ? 1 : Number(h[2])
    if (count > 0) out.push({ path: file, lines: [start, start + count - 1] })
    else out.push({ path: file, lines: [Math.max(1, start), start + 1] })
  }
  return out
}

/** The first line of git's complaint, for a message. */
const gitSays = (e: unknown): string =>
  (e instanceof Error ? e.message.split('\n')[0]?.slice(0, 200) : 'failed') ?? 'failed'

/** The lines of a file's bytes, counted as source.read counts them (a last line without a newline is one). */
const lineCount = (bytes: Buffer): number => {
  let n = 0
  for (const b of bytes) if (b === 0x0a) n++
  return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? n + 1 : n
}

/**
 * Checks the listed `changed` ranges of `bug` against its commit in `repository`: each path must be
 * a file there and each range must lie within its lines (a range past the end would never be hit,
 * so the bug would count as a miss whatever the model cites). A path or range that does not is
 * INPUT_INVALID naming the bug, the path, the range and the file's line count; a commit the
 * repository lacks is SOURCE_UNAVAILABLE (told on the bug's line, as for a fix commit).
 */
const checkListedRanges = async (bug: Bug, ranges: readonly ChangedRange[], repository: string): Promise<void> => {
  const commit = bug.truth.commit
  const at = commit.slice(0, 12)
  try {
    await run('git', ['-C', repository, 'rev-parse', '--verify', '--quiet', `${commit}^{commit}`])
  } catch (e) {
    throw new FailureError(
      failure('SOURCE_UNAVAILABLE', `${bug.id}: the commit ${at} is not in ${repository} (${gitSays(e)})`)
    )
  }
  const lines = new Map<string, number>()
  for (const c of ranges) {
    let total = lines.get(c.path)
    if (total === undefined) {
      const object = `${commit}:${c.path}`
      const type = await run('git', ['-C', repository, 'cat-file', '-t', object], { encoding: 'utf8' }).then(
        (r) => r.stdout.trim(),
        () => null
      )
      if (type !== 'blob')
        fail(
          'INPUT_INVALID',
          `${bug.id}: changed names ${c.path}, which is ${type === null ? 'no file' : `a ${type}, not a file,`} at ${at}`,
          { bug: bug.id, path: c.path }
        )
      try {
        const { stdout } = await run('git', ['-C', repository, 'cat-file', 'blob', object], {
          maxBuffer: 256 << 20,
          encoding: 'buffer'
        })
        total = lineCount(stdout)
      } catch (e) {
        throw new FailureError(
          failure(
            'SOURCE_UNAVAILABLE',
            `${bug.id}: git cannot read ${c.path} at ${at} in ${repository} (${gitSays(e)})`
          )
        )
      }
      lines.set(c.path, total)
    }
    // A range that starts past the end can never be hit. One that ends a line past it is the form
    // a fix appending lines is given (the line before and after the insertion, as parseDiffRanges
    // derives it from a fix commit), and it is hit by a citation of its first line.
    if (c.lines[0] > total)
      fail(
        'INPUT_INVALID',
        `${bug.id}: changed ${c.path} lines ${c.lines[0]}-${c.lines[1]} lie past the end of the file: it has ${total} lines at ${at}`,
        { bug: bug.id, path: c.path, lines: c.lines, total_lines: total }
      )
  }
}

/**
 * What the fix of `bug` changed, as ranges at its commit (from git when it names a fix commit;
 * listed ranges are checked against the file at the commit when a repository is named).
 */
export const changedOf = async (bug: Bug, repository: string | null): Promise<ChangedRange[]> => {
  if (bug.truth.changed !== undefined) {
    if (repository !== null) await checkListedRanges(bug, bug.truth.changed, repository)
    return bug.truth.changed
  }
  if (repository === null)
    return fail('INPUT_INVALID', `${bug.id}: its truth is a fix commit; name the repository (--repository PATH)`)
  const fix = bug.truth.fix_commit as string
  try {
    const { stdout } = await run(
      'git',
      ['-C', repository, 'diff', '--no-color', '--no-ext-diff', '--no-renames', '-U0', bug.truth.commit, fix],
      { maxBuffer: 64 << 20, encoding: 'utf8' }
    )
    const ranges = parseDiffRanges(stdout)
    if (ranges.length === 0)
      fail('INPUT_INVALID', `${bug.id}: ${bug.truth.commit.slice(0, 12)}..${fix.slice(0, 12)} changes no line`)
    return ranges
  } catch (e) {
    if (e instanceof FailureError) throw e
    throw new FailureError(
      failure(
        'SOURCE_UNAVAILABLE',
        `${bug.id}: git cannot diff ${bug.truth.commit.slice(0, 12)}..${fix.slice(0, 12)} in ${repository} (${gitSays(e)})`
      )
    )
  }
}

/**
 * The changed ranges of every bug. A bug whose commits the repository cannot diff (not fetched, a
 * shallow clone) is left out with its message, so the others still run; a truth that needs a
 * repository when none is named fails the whole suite.
 */
export const changedOfAll = async (
  bugs: readonly Bug[],
  repository: string | null
): Promise<{ changed: Map<string, readonly ChangedRange[]>; failures: Map<string, string> }> => {
  const changed = new Map<string, readonly ChangedRange[]>()
  const failures = new Map<string, string>()
  for (const bug of bugs) {
    try {
      changed.set(bug.id, await changedOf(bug, repository))
    } catch (e) {
      if (!(e instanceof FailureError) || e.failure.code !== 'SOURCE_UNAVAILABLE') throw e
      failures.set(bug.id, `${e.failure.code}: ${e.failure.message}`)
      changed.set(bug.id, [])
    }
  }
  return { changed, failures }
}
