/**
 * The golden outputs: every text the library shows of a case, computed over the example cases
 * (case-format/examples), the scripted investigation on a fresh demo world (the case the docs'
 * prompts come from) and a case holding a query of every kind on that world (recorded, repeated,
 * answered from the case, refused). Per kind of output one file under test/goldens/: the small
 * texts in full (capture text, request text, the MCP tools, the report's timeline HTML of the valid
 * examples and the investigations), the large ones as their digest and length (prompts, reports,
 * report capture bodies, MCP answers). A test compares them with what
 * the build computes (test/case-format/outputs.int.test.ts), so a change of any of them is seen.
 *
 *   node dist/scripts/goldens.js            compares and names what differs
 *   node dist/scripts/goldens.js --write    writes the golden files (after a change that means it)
 *   node dist/scripts/goldens.js --dump DIR writes every text in full under DIR/<kind>/ (dump a
 *                                           build of main and one of yours, then diff -r the two)
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { writeDemoWorld } from '../src/demo/world.js'
import { runScriptedInvestigation } from './lib/scripted-investigation.js'
import { repoRoot } from '../test/helpers/fs.js'
import { locate } from '../src/adapters/case-store/directory-store.js'
import { initCase } from '../src/adapters/case-store/init.js'
import { fixedEnv } from '../src/adapters/env.js'
import { loadProfile } from '../src/fp.js'
import { caseReport } from '../src/report/case-report.js'
import type { RecordedEvent } from '../src/events/chain.js'
import type { ObjectRefLite } from '../src/domain/case-state.js'
import { ruleFold } from '../src/domain/rules/fold.js'
import { promptInputsFrom, promptObjectRefs } from '../src/projections/prompt-derivation.js'
import { renderPrompt } from '../src/projections/prompt.js'
import { Capture } from '../src/events/capture.js'
import { renderCapture } from '../src/projections/capture-text.js'
import { requestText } from '../src/projections/request-text.js'
import { captureBody } from '../src/projections/report/captures.js'
import { captureAnswerText, queryAnswer, refusalAnswer } from '../src/mcp/answers.js'
import { toolSpecs } from '../src/mcp/tools.js'
import { analysisOf, openSourceResearch } from '../src/research/source/open.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { queryInCase } from '../src/commands/case-query.js'
import { FailureError, thrownFailure } from '../src/failures/error.js'
import { sha256Digest } from '../src/events/canonical.js'

/** The kinds of output, each one golden file; `full` ones keep their texts, the others a digest. */
export const GOLDEN_KINDS = {
  'capture-text': true,
  'request-text': true,
  'mcp-tools': true,
  'report-timeline': true,
  prompts: false,
  reports: false,
  'report-captures': false,
  'mcp-answers': false
} as const
export type GoldenKind = keyof typeof GOLDEN_KINDS

export type Outputs = Record<GoldenKind, Map<string, string>>

export const GOLDEN_DIR = (): string => path.join(repoRoot(), 'test', 'goldens')

const must = <A>(r: E.Either<unknown, A>): A => {
  if (E.isLeft(r)) throw new Error(JSON.stringify(r.left))
  return r.right
}

/** Every event of a case, in order (null when it does not open). */
const eventsOf = async (dir: string): Promise<RecordedEvent[] | null> => {
  const { store, ref } = locate(dir)
  const events: RecordedEvent[] = []
  try {
    await store.replay(ref, [
      {
        name: 'events',
        version: 1,
        init: () => events,
        evolve: (s: RecordedEvent[], e: RecordedEvent) => {
          s.push(e)
          return s
        },
        view: () => null
      }
    ])
  } catch (e) {
    if (e instanceof FailureError) return null
    throw e
  }
  return events
}

const readAll = async (dir: string, refs: readonly ObjectRefLite[]): Promise<Map<string, Uint8Array>> => {
  const { store, ref } = locate(dir)
  const out = new Map<string, Uint8Array>()
  for (const r of refs) {
    if (out.has(r.digest)) continue
    try {
      out.set(r.digest, await store.readObject(ref, r))
    } catch (e) {
      if (!(e instanceof FailureError)) throw e
    }
  }
  return out
}

const decodeCapture = (b: Uint8Array): Capture | null => {
  const d = Capture.decode(JSON.parse(Buffer.from(b).toString('utf8')))
  return E.isRight(d) ? d.right : null
}

const emptyOutputs = (): Outputs =>
  Object.fromEntries(Object.keys(GOLDEN_KINDS).map((k) => [k, new Map<string, string>()])) as Outputs

/** The texts of one capture, under `name`. */
const captureOutputs = (out: Outputs, name: string, c: Capture): void => {
  out['capture-text'].set(name, renderCapture(c).join('\n'))
  out['request-text'].set(name, requestText(c.kind, c.request))
  out['report-captures'].set(name, captureBody(c))
  out['mcp-answers'].set(name, captureAnswerText(`${name}: header`, c))
}

/** The cases whose report timeline is kept in full (report-timeline); the others by the report's digest. */
const TIMELINE_OF = /^(valid\/|scripted$|every-kind$)/

/** The report, the re-rendered prompts and the captures of the case at `dir`. */
const caseOutputs = async (out: Outputs, name: string, dir: string): Promise<void> => {
  try {
    // a case that does not declare its id is shown by its path: the repository's, not this machine's
    const html = (await caseReport(dir)).replaceAll(repoRoot(), '<repo>')
    out.reports.set(name, html)
    // The timeline of the valid examples and the investigations in full, HTML byte for byte.
    const timeline = /<section id="timeline">[\s\S]*?<\/section>/.exec(html)?.[0]
    if (timeline !== undefined && TIMELINE_OF.test(name)) out['report-timeline'].set(name, timeline)
  } catch (e) {
    out.reports.set(name, `refused: ${thrownFailure(e).code}`)
  }
  const events = await eventsOf(dir)
  if (events === null) return
  const fold = ruleFold()
  for (const e of events) fold.feed(e)
  fold.end()
  const prompts = fold.obligations().flatMap((o) => (o.kind === 'prompt' ? [o] : []))
  const captureRefs = events.flatMap((e) =>
    e.type === 'CaptureRecorded' || e.type === 'EnrichmentCaptured' ? [e.data.capture] : []
  )
  const objects = await readAll(dir, [...prompts.flatMap((o) => promptObjectRefs(o.state)), ...captureRefs])
  for (const o of prompts) {
    const inputs = promptInputsFrom(o.state, (r) => objects.get(r.digest))
    out.prompts.set(
      `${name} turn ${o.turn} (seq ${o.seq})`,
      inputs === null ? 'objects missing' : renderPrompt(o.state, inputs).text
    )
  }
  for (const r of captureRefs) {
    const b = objects.get(r.digest)
    const c = b === undefined ? null : decodeCapture(b)
    if (c !== null) captureOutputs(out, `${name} ${r.digest.slice(0, 19)}`, c)
  }
}

const exampleDirs = (): Array<{ name: string; dir: string }> => {
  const root = path.join(repoRoot(), 'case-format', 'examples')
  return readdirSync(root)
    .filter((g) => statSync(path.join(root, g)).isDirectory())
    .sort()
    .flatMap((g) =>
      readdirSync(path.join(root, g))
        .filter((n) => statSync(path.join(root, g, n)).isDirectory())
        .sort()
        .map((n) => ({ name: `${g}/${n}`, dir: path.join(root, g, n) }))
    )
}

/** A query of every kind on the demo world, with the answers an agent can get (recorded, repeated, refused). */
export const EVERY_KIND: ReadonlyArray<{ readonly id: string; readonly args: Record<string, unknown> }> = [
  { id: 'files', args: { kind: 'source.files', text: 'wolpertinger' } },
  { id: 'files-scoped', args: { kind: 'source.files', text: '.cpp', path_prefix: 'src/server/scripts/' } },
  { id: 'search', args: { kind: 'source.search', text: 'Wolpertinger' } },
  { id: 'search-none', args: { kind: 'source.search', text: 'no such text anywhere', path_prefix: 'src/' } },
  { id: 'symbol', args: { kind: 'source.symbol', symbol: 'NPC_WILD_WOLPERTINGER' } },
  { id: 'registration', args: { kind: 'source.registration', symbol: 'AddSC_npc_wolpertinger' } },
  { id: 'registration-none', args: { kind: 'source.registration', symbol: 'SPELL_WOLPERTINGER_NET' } },
  { id: 'schema-source', args: { kind: 'source.schema', text: 'creature_template' } },
  {
    id: 'read',
    args: { kind: 'source.read', path: 'src/server/scripts/World/npc_wolpertinger.cpp', start_line: 1, end_line: 40 }
  },
  {
    id: 'read-window',
    args: { kind: 'source.read', path: 'src/server/scripts/Events/brewfest.cpp', start_line: 1000, end_line: 1200 }
  },
  { id: 'context', args: { kind: 'source.context', text: '23487' } },
  { id: 'context-scoped', args: { kind: 'source.context', text: 'NPC_WILD_WOLPERTINGER', path_prefix: 'src/server/' } },
  { id: 'tables', args: { kind: 'database.tables' } },
  { id: 'tables-text', args: { kind: 'database.tables', text: 'creature', database: 'world' } },
  { id: 'schema', args: { kind: 'database.schema', table: 'creature_template' } },
  {
    id: 'rows',
    args: {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry', 'name', 'subname', 'npcflag', 'DamageModifier', 'AIName'],
      filters: [{ column: 'entry', operator: 'ge', value: 1 }],
      order_by: [{ column: 'name', direction: 'desc' }],
      offset: 0,
      limit: 3
    }
  },
  {
    id: 'rows-in',
    args: {
      kind: 'database.rows',
      table: 'spell_script_names',
      columns: ['spell_id', 'ScriptName'],
      filters: [
        { column: 'spell_id', operator: 'in', value: [41621, 1, 2] },
        { column: 'ScriptName', operator: 'contains', value: 'net' }
      ],
      offset: 0,
      limit: 10
    }
  },
  {
    id: 'count',
    args: {
      kind: 'database.count',
      table: 'creature_template',
      filters: [
        { column: 'entry', operator: 'lt', value: 30000 },
        { column: 'subname', operator: 'ne', value: null }
      ]
    }
  },
  {
    id: 'not-allowed',
    args: { kind: 'database.rows', table: 'account_secrets', columns: ['id'], filters: [], offset: 0, limit: 1 }
  },
  { id: 'unknown-member', args: { kind: 'source.files', text: 'x', extra: 1 } },
  { id: 'unknown-table', args: { kind: 'database.schema', table: 'no_such_table' } },
  { id: 'missing-file', args: { kind: 'source.read', path: 'src/none.cpp', start_line: 1, end_line: 2 } },
  { id: 'invalid', args: { kind: 'source.read', path: '../x', start_line: 1, end_line: 2 } },
  // a repeat (the same request, another command id) and a retry (the same command id)
  { id: 'search-again', args: { kind: 'source.search', text: 'Wolpertinger' } },
  { id: 'search', args: { kind: 'source.search', text: 'Wolpertinger' } }
]

const everyKindOutputs = async (out: Outputs, profileFile: string, dir: string): Promise<void> => {
  const env = fixedEnv('2026-11-30T10:00:00.000Z', 'gk')
  const profile = must(await loadProfile(profileFile)())
  for (const context of [true, false]) {
    const tools = toolSpecs({
      profile,
      analysis: analysisOf(profile),
      context,
      caseId: 'case-every-kind',
      queryCost: 1
    })
    for (const tool of tools) {
      // the answer's schema is the same for every tool: its digest, not its text
      const outputSchema = sha256Digest(Buffer.from(JSON.stringify(tool.outputSchema), 'utf8'))
      out['mcp-tools'].set(
        `demo profile, source.context ${context ? 'on' : 'off'}: ${tool.name}`,
        JSON.stringify({ ...tool, outputSchema }, null, 1)
      )
    }
  }
  await initCase({ dir, caseId: 'case-every-kind', title: 'A query of every kind', env })
  const research = createProjectResearch(profile, { openSource: openSourceResearch })
  try {
    const seen = new Map<string, number>()
    for (const q of EVERY_KIND) {
      const n = (seen.get(q.id) ?? 0) + 1
      seen.set(q.id, n)
      const name = `every-kind ${q.id}${n > 1 ? ` (${n})` : ''}`
      let answer: unknown
      try {
        // one program asking is named in the report
        const requester =
          q.id === 'rows' ? { requester: { protocol: 'mcp' as const, name: 'golden-agent', version: '1.0' } } : {}
        answer = queryAnswer(await queryInCase(dir, research, q.args, `q-${q.id}`, { env, ...requester }))
      } catch (e) {
        answer = refusalAnswer(thrownFailure(e))
      }
      out['mcp-answers'].set(`${name} answer`, JSON.stringify(answer, null, 1))
    }
  } finally {
    await research.close()
  }
  await caseOutputs(out, 'every-kind', dir)
}

/** Every golden output, computed by this build. */
export const goldenOutputs = async (): Promise<Outputs> => {
  const out = emptyOutputs()
  for (const { name, dir } of exampleDirs()) await caseOutputs(out, name, dir)
  const root = mkdtempSync(path.join(os.tmpdir(), 'vba-goldens-'))
  try {
    const world = await writeDemoWorld(path.join(root, 'world'))
    const run = await runScriptedInvestigation(world.profile, path.join(root, 'scripted'))
    run.prompts.forEach((p, i) => {
      out.prompts.set(`scripted recorded turn ${i + 1}`, p)
    })
    await caseOutputs(out, 'scripted', path.join(root, 'scripted'))
    await everyKindOutputs(out, world.profile, path.join(root, 'every-kind'))
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
  return out
}

const SEPARATOR = '=== '

/** The golden file of one kind of output: `=== name` then the text (full kinds) or `=== name digest length`. */
export const goldenText = (kind: GoldenKind, texts: ReadonlyMap<string, string>): string =>
  [...texts.keys()]
    .sort()
    .map((name) => {
      const text = texts.get(name) ?? ''
      return GOLDEN_KINDS[kind]
        ? `${SEPARATOR}${name}\n${text}\n`
        : `${SEPARATOR}${name} ${sha256Digest(Buffer.from(text, 'utf8'))} ${text.length}\n`
    })
    .join('')

const goldenFile = (kind: GoldenKind): string => path.join(GOLDEN_DIR(), `${kind}.txt`)

/** The entries of a golden file (name line and what follows), by name. */
const entries = (text: string): Map<string, string> => {
  const out = new Map<string, string>()
  for (const block of text.split(new RegExp(`^(?=${SEPARATOR})`, 'm'))) {
    if (block === '') continue
    const nl = block.indexOf('\n')
    out.set(block.slice(SEPARATOR.length, nl).replace(/ sha256:[0-9a-f]{64} \d+$/, ''), block)
  }
  return out
}

/** What differs between the committed goldens and `outputs`: one line per kind and name. */
export const goldenDifferences = (outputs: Outputs): string[] => {
  const diffs: string[] = []
  for (const kind of Object.keys(GOLDEN_KINDS) as GoldenKind[]) {
    let committed: string
    try {
      committed = readFileSync(goldenFile(kind), 'utf8')
    } catch {
      diffs.push(`${kind}: no golden file ${goldenFile(kind)}`)
      continue
    }
    const now = goldenText(kind, outputs[kind])
    if (committed === now) continue
    const a = entries(committed)
    const b = entries(now)
    for (const name of new Set([...a.keys(), ...b.keys()])) {
      if (!b.has(name)) diffs.push(`${kind}: ${name}: no longer produced`)
      else if (!a.has(name)) diffs.push(`${kind}: ${name}: new`)
      else if (a.get(name) !== b.get(name)) diffs.push(`${kind}: ${name}: differs`)
    }
    if (diffs.length === 0) diffs.push(`${kind}: the file differs in its order`)
  }
  return diffs
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(path.basename(process.argv[1]))
if (isMain) {
  const outputs = await goldenOutputs()
  const arg = process.argv[2]
  if (arg === '--write') {
    mkdirSync(GOLDEN_DIR(), { recursive: true })
    for (const kind of Object.keys(GOLDEN_KINDS) as GoldenKind[])
      writeFileSync(goldenFile(kind), goldenText(kind, outputs[kind]))
    process.stdout.write(`wrote ${Object.keys(GOLDEN_KINDS).length} golden files into ${GOLDEN_DIR()}\n`)
  } else if (arg === '--dump') {
    const to = process.argv[3]
    if (to === undefined) throw new Error('--dump needs a directory')
    for (const kind of Object.keys(GOLDEN_KINDS) as GoldenKind[]) {
      mkdirSync(path.join(to, kind), { recursive: true })
      for (const [name, text] of outputs[kind])
        writeFileSync(path.join(to, kind, `${name.replace(/[^A-Za-z0-9.-]+/g, '_')}.txt`), text)
    }
    process.stdout.write(`wrote every output under ${to}\n`)
  } else {
    const diffs = goldenDifferences(outputs)
    process.stdout.write(diffs.length === 0 ? 'every output is its golden\n' : `${diffs.join('\n')}\n`)
    process.exitCode = diffs.length === 0 ? 0 : 1
  }
}
