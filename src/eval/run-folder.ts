/**
 * An evaluation's run folder (--out) and its run.json: which suite, repository and model the run is
 * of. A run is resumed only by the same suite, repository and model (its cases and results would
 * otherwise mix two of them), and its folder lies outside the suite: a suite's bug folders are
 * every folder in it, so a run inside the suite would have its own folders (cases/, reports/) read
 * as bugs the next time the suite is read, and its resume refused.
 */
import { existsSync, promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { fail, thrownFailure } from '../failures/error.js'
import { readRegular } from '../adapters/regular-file.js'
import { parseBoundedJson } from '../events/bounds.js'
import { makeDirs } from '../adapters/make-dirs.js'

/**
 * What identifies the model of a run, as run.json and results.json record it; never a secret. A
 * command model is its program name only (not its arguments nor the environment assignments before
 * it: either may hold a key); an OpenAI-compatible endpoint is its URL's origin (scheme, host and
 * port: no credentials, path or query) and the model name; `function` is a model a program passes
 * to runEval (the tests' oracle), named by that program.
 */
export type RunModel =
  | { readonly kind: 'command'; readonly program: string }
  | { readonly kind: 'http'; readonly origin: string; readonly name: string }
  | { readonly kind: 'baseline' }
  | { readonly kind: 'function'; readonly name: string }

/** The model in a few words (messages, the table, the summary). */
export const modelLabel = (m: RunModel): string =>
  m.kind === 'command'
    ? `command ${m.program}`
    : m.kind === 'http'
      ? `${m.name} at ${m.origin}`
      : m.kind === 'baseline'
        ? 'baseline'
        : `function ${m.name}`

/** An endpoint URL's origin: its scheme, host and port, without credentials, path or query. */
export const endpointOrigin = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}`
  } catch {
    return 'an invalid URL'
  }
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 2048

/** A run.json's `model` member as a RunModel (only its known members), or null when it is not one. */
const runModelOf = (v: unknown): RunModel | null => {
  const m = v as Record<string, unknown> | null
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return null
  if (m['kind'] === 'baseline') return { kind: 'baseline' }
  if (m['kind'] === 'command' && isText(m['program'])) return { kind: 'command', program: m['program'] }
  if (m['kind'] === 'http' && isText(m['origin']) && isText(m['name']))
    return { kind: 'http', origin: m['origin'], name: m['name'] }
  if (m['kind'] === 'function' && isText(m['name'])) return { kind: 'function', name: m['name'] }
  return null
}

/**
 * OUT/run.json: which suite, repository and model the run is of (eval score reads them). A run.json
 * written before the model was recorded has no `model`: see checkRun.
 */
export interface RunFile {
  readonly format: 'vba-eval-run'
  readonly version: 1
  readonly suite: string
  readonly repository: string | null
  readonly model?: RunModel
}

/**
 * OUT/run.json as a run wrote it: a JSON object of format vba-eval-run naming its suite (and its
 * repository or null, and its model). Anything else (not JSON, another shape, a link, over 1 MiB)
 * is INPUT_INVALID naming the file.
 */
export const readRunFile = async (file: string): Promise<Partial<RunFile> & { suite: string }> => {
  let text: string
  try {
    text = (await readRegular(file, { maxBytes: 1 << 20 })).toString('utf8')
  } catch (e) {
    return fail('INPUT_INVALID', `${file} cannot be read: ${thrownFailure(e).message}`)
  }
  const parsed = parseBoundedJson(text)
  if (E.isLeft(parsed)) return fail('INPUT_INVALID', `${file}: ${parsed.left}`)
  const r = parsed.right as Record<string, unknown> | null
  if (
    typeof r !== 'object' ||
    r === null ||
    Array.isArray(r) ||
    r['format'] !== 'vba-eval-run' ||
    typeof r['suite'] !== 'string' ||
    !(r['repository'] === undefined || r['repository'] === null || typeof r['repository'] === 'string')
  )
    return fail(
      'INPUT_INVALID',
      `${file} is not the run file of vba eval (an object of format "vba-eval-run" naming its suite folder, and its repository or null)`
    )
  if (r['model'] === undefined) return r as Partial<RunFile> & { suite: string }
  const model = runModelOf(r['model'])
  if (model === null)
    return fail(
      'INPUT_INVALID',
      `${file}: its model is not one vba eval records (a command's program, an endpoint's origin and model name, the baseline)`
    )
  return { ...(r as Partial<RunFile> & { suite: string }), model }
}

/**
 * `p` made absolute with the links of its existing part resolved (the part not made yet as
 * written): where a folder will be once it is made.
 */
export const realPlace = async (p: string): Promise<string> => {
  let head = path.resolve(p)
  const rest: string[] = []
  for (;;) {
    const real = await fsp.realpath(head).catch(() => null)
    if (real !== null) return path.join(real, ...rest)
    const up = path.dirname(head)
    if (up === head) return path.resolve(p)
    rest.unshift(path.basename(head))
    head = up
  }
}

/** Refuses (INVALID_ARGUMENT) a run folder `out` that is the suite folder `suite` or inside it, links resolved. */
export const checkOutOutsideSuite = async (out: string, suite: string): Promise<void> => {
  const [o, s] = await Promise.all([realPlace(out), realPlace(suite)])
  const within = path.relative(s, o)
  if (within === '' || !(within === '..' || within.startsWith(`..${path.sep}`) || path.isAbsolute(within)))
    fail(
      'INVALID_ARGUMENT',
      `--out ${out} is ${within === '' ? 'the suite folder' : 'inside the suite folder'} ${suite}: a run's own folders would be read as bugs of the suite; choose an --out outside it`,
      { out: o, suite: s }
    )
}

/** Whether two repository paths name the same folder (as written, or once links are resolved). */
const sameRepository = async (a: string | null, b: string | null): Promise<boolean> =>
  a === b || (a !== null && b !== null && (await realPlace(a)) === (await realPlace(b)))

/**
 * The run.json of a run into `out` of `suite`, against `repository`, with `model`, checked against
 * the one there: a run of another suite is INPUT_INVALID; one against another repository or with
 * another model is INVALID_ARGUMENT naming both (its cases and results.json would mix them: a run
 * of another model or repository goes into another --out). `write`: run.json is to be written (a
 * new run, or one whose run.json lacks what this one records). Nothing is written here.
 */
export const checkRun = async (
  out: string,
  suite: string,
  repository: string | null,
  model: RunModel
): Promise<{ readonly run: RunFile; readonly write: boolean }> => {
  const file = path.join(out, 'run.json')
  const run: RunFile = { format: 'vba-eval-run', version: 1, suite: path.resolve(suite), repository, model }
  // (a trailing slash would make lstat follow a link)
  const st = await fsp.lstat(out.replace(/[\\/]+$/, '') || out).catch(() => null)
  if (st !== null && !st.isDirectory())
    fail(
      'INVALID_ARGUMENT',
      `--out ${out} is ${st.isSymbolicLink() ? 'a symbolic link' : 'a file'}, not a folder: a run goes into a folder of its own`
    )
  if (!existsSync(file)) return { run, write: true }
  const before = await readRunFile(file)
  if (before.suite !== run.suite)
    fail('INPUT_INVALID', `${out} holds a run of another suite (${String(before.suite)}); choose another --out`)
  // A run.json of a run with no repository (null: its profile had no [source] and none was named, so
  // no bug could be investigated) takes the one named now; another repository is refused.
  const recorded = before.repository ?? null
  if (recorded !== null && !(await sameRepository(recorded, repository)))
    fail(
      'INVALID_ARGUMENT',
      `${out} holds a run against the repository ${recorded}, not ${repository ?? 'none'}: its cases and results would mix two repositories; use another --out for this run (or resume with --repository ${recorded})`,
      { recorded, given: repository }
    )
  // A run.json written before the model was recorded has none: it is accepted and the model of this
  // run filled in (refusing would strand every earlier run folder; which model made its cases cannot
  // be known, and from now on a resume with another model is refused).
  if (before.model !== undefined && modelLabel(before.model) !== modelLabel(model))
    fail(
      'INVALID_ARGUMENT',
      `${out} holds a run of the model ${modelLabel(before.model)}, not ${modelLabel(model)}: its results would mix two models; use another --out for this model`,
      { recorded: before.model, given: model }
    )
  return { run, write: before.model === undefined || recorded === null }
}

/** Makes the run folder (and its cases folder) and writes `run` as its run.json. */
export const writeRun = async (out: string, run: RunFile): Promise<void> => {
  await makeDirs(path.join(out, 'cases'))
  await fsp.writeFile(path.join(out, 'run.json'), `${JSON.stringify(run, null, 2)}\n`)
}
