/**
 * The deterministic baseline of `vba eval --baseline`: a scripted model with no LLM, the floor a
 * real model should clear. It reads its case (the report, the facts, its own latest result), and:
 * interprets the report as its first line; searches the code (source.search under `src/`) for the
 * report's terms in a fixed order (script names the facts found in the source, then code-like
 * identifiers of the report, then names in capitals, then the ids), the next term while a search
 * finds nothing; reads 60 lines around the first hit of the best file (the file with most hits,
 * scripts first); proposes that the read code is the cause and concludes on it. No randomness, no
 * clock: the same case gives the same answers.
 */
import { openCaseAt } from '../adapters/case-store/at.js'
import { readObject } from '../adapters/case-store/objects.js'
import { parseBoundedBytes } from '../events/bounds.js'
import type { ModelFn } from '../investigation/model-fn.js'
import type { EvalBug, EvalModel } from './run.js'

const rec = (u: unknown): Record<string, unknown> =>
  typeof u === 'object' && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : {}
const arr = (u: unknown): unknown[] => (Array.isArray(u) ? u : [])

const STOP = new Set(
  [
    'The This That These Those When Where What Which While With Without After Before Expected Current Steps Step',
    'Source Extra Notes Behaviour Behavior Description Players Player They There Then Also Should Does Cannot Using',
    'Use Log Go Get Set Try See Note Issue Bug Blizzlike Labels Comments Apply Cast Take Have Leave Kill Enter Walk',
    'Fight Defeat Start Follow Watch Talk Put Level Summon Target Attack Open Click Wait Move Reproduce Tested It If',
    'In On At For From To And Or But Any All Every Some No Not You Your We Our'
  ]
    .join(' ')
    .split(' ')
)

/** The code spellings of a name (apostrophes dropped: Val'kyr, Master's): snake case (script names), capitals (constants), then the name itself. */
const spellings = (name: string): string[] => {
  const parts = name
    .replace(/['’]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
  return parts.length < 2 ? [name] : [parts.join('_').toLowerCase(), parts.join('_').toUpperCase(), name]
}

/**
 * The terms the baseline searches for, in order, each once (at most `max`): script names the facts
 * found in the source and the entities' script names, code-like identifiers of the report, each
 * name of the report in its code spellings (snake case, capitals) and as written, single
 * capitalised words, then ids (numbers of 4 to 7 digits).
 */
export const baselineTerms = (report: string, facts: readonly unknown[], max = 8): string[] => {
  const out: string[] = []
  const add = (t: string): void => {
    const v = t.trim()
    if (v.length >= 3 && v.length <= 80 && !out.includes(v)) out.push(v)
  }
  for (const f of facts.map(rec)) if (f['type'] === 'source_symbol' && Number(f['hits']) > 0) add(String(f['symbol']))
  for (const f of facts.map(rec)) {
    const script = rec(f['values'])['ScriptName']
    if (f['type'] === 'entity' && typeof script === 'string' && script !== '') add(script)
  }
  const text = report.replace(/https?:\/\/\S+/g, ' ').replace(/`[^`\n]*`/g, ' ')
  // code-like identifiers: snake_case with a letter, or CamelCase with an inner capital
  for (const m of text.matchAll(
    /\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[a-z]+[A-Z][A-Za-z0-9]+\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b/g
  ))
    add(m[0])
  // names: runs of capitalised words (hyphenated too, joined by of/the), two words at least once stop words are dropped
  const word = "[A-Z][a-z']+(?:-[A-Z][a-z']+)*"
  const singles: string[] = []
  for (const m of text.matchAll(new RegExp(`\\b${word}(?:\\s+(?:of|the|de)?\\s*${word})*`, 'g'))) {
    const words = m[0].split(/\s+/)
    while (words.length > 0 && STOP.has(words[0] as string)) words.shift()
    const name = words.join(' ').replace(/\s+(of|the|de)$/, '')
    if (words.length >= 2 || name.includes('-')) for (const s of spellings(name)) add(s)
    else if (words.length === 1 && name.length >= 4 && !STOP.has(name)) singles.push(name)
  }
  for (const w of singles) add(w)
  // ids: numbers of 4 to 7 digits
  for (const m of report.matchAll(/(?<![\d.])\d{4,7}(?![\d.])/g)) add(m[0])
  return out.slice(0, max)
}

/** The best place of a search capture: the first hit of the file with most hits (scripts, then .cpp, first). */
export const bestHit = (capture: unknown): { path: string; line: number } | null => {
  const hits = arr(rec(rec(capture)['result'])['hits']).map(rec)
  const counts = new Map<string, number>()
  for (const h of hits) if (typeof h['path'] === 'string') counts.set(h['path'], (counts.get(h['path']) ?? 0) + 1)
  const score = (p: string): number =>
    (counts.get(p) ?? 0) + (p.includes('/scripts/') ? 1000 : 0) + (p.endsWith('.cpp') ? 100 : 0)
  const files = [...counts.keys()].sort((a, b) => score(b) - score(a) || (a < b ? -1 : 1))
  const best = files[0]
  if (best === undefined) return null
  const first = hits.find((h) => h['path'] === best)
  return typeof first?.['line'] === 'number' ? { path: best, line: first['line'] } : null
}

type Step =
  | { readonly kind: 'start' }
  | { readonly kind: 'search'; readonly term: number }
  | { readonly kind: 'read' }
  | { readonly kind: 'propose'; readonly evidence: string }
  | { readonly kind: 'conclude'; readonly evidence: string }

const answer = (next: Record<string, unknown>): string => JSON.stringify({ next })

/** The baseline for one bug's case. */
export const baselineFor = (bug: EvalBug): ModelFn => {
  let terms: string[] | null = null
  let step: Step = { kind: 'start' }
  let lastEvidence: string | null = null
  const search = (i: number, list: readonly string[]): string => {
    step = { kind: 'search', term: i }
    return answer({
      kind: 'tool',
      operation: 'project.query',
      arguments: { kind: 'source.search', text: list[i], path_prefix: 'src/' }
    })
  }
  return async ({ phase }) => {
    const state = (await openCaseAt(bug.caseDir)).cursor.state
    const read = async (ref: { digest: string; size: number } | null | undefined): Promise<Buffer | null> =>
      ref == null ? null : readObject(bug.caseDir, ref).catch(() => null)
    const report =
      terms === null || phase === 'interpretation' ? ((await read(state.report))?.toString('utf8') ?? '') : ''
    if (terms === null) {
      const facts = arr(rec(parseBoundedBytes((await read(state.facts)) ?? Buffer.from('{}')))['facts'])
      terms = baselineTerms(report, facts)
    }
    if (phase === 'interpretation') {
      const first = report.split('\n').find((l) => l.trim() !== '') ?? 'the report'
      return JSON.stringify({ interpretation: { summary: first.replace(/^#+\s*/, '').slice(0, 300) } })
    }
    const last = state.lastResult
    const evidence = last?.kind === 'capture' ? last.evidence_id : null
    if (evidence !== null) lastEvidence = evidence
    const s: Step = step
    switch (s.kind) {
      case 'start':
        if (terms.length > 0) return search(0, terms)
        break
      case 'search': {
        const capture =
          last?.kind === 'capture'
            ? parseBoundedBytes((await read(state.research.evidenceRefs.get(last.digest))) ?? Buffer.from('{}'))
            : null
        const hit = capture === null ? null : bestHit(capture)
        if (hit !== null) {
          step = { kind: 'read' }
          const start = Math.max(1, hit.line - 25)
          return answer({
            kind: 'tool',
            operation: 'project.query',
            arguments: { kind: 'source.read', path: hit.path, start_line: start, end_line: start + 59 }
          })
        }
        if (s.term + 1 < terms.length) return search(s.term + 1, terms)
        break
      }
      case 'read':
        if (evidence !== null) {
          step = { kind: 'propose', evidence }
          return answer({
            kind: 'hypothesis',
            action: 'propose',
            statement: 'The code read here handles what the report describes; the bug is in it.',
            evidence: [evidence]
          })
        }
        break
      case 'propose':
      case 'conclude':
        step = { kind: 'conclude', evidence: s.evidence }
        return answer({
          kind: 'conclusion',
          summary: 'The cause is in the code read (baseline: the best hit of the report terms).',
          hypotheses: ['H1'],
          evidence: [s.evidence]
        })
    }
    // Nothing found: conclude on the last result, citing what there is.
    return answer({
      kind: 'conclusion',
      summary: 'The baseline found no code for the report terms.',
      hypotheses: [],
      evidence: lastEvidence === null ? [] : [lastEvidence]
    })
  }
}

/** The baseline as an evaluation model. */
export const baselineModel: EvalModel = baselineFor
