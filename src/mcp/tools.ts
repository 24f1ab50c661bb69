/**
 * The tools `vba mcp` offers: one per query kind the profile enables, plus `case_status`. Each
 * tool's input schema is generated from the io-ts codec of its kind (the same contract as a
 * project.query, without `kind`: the tool names it), closed to unknown members as the decoder is,
 * and annotated with what an agent needs to act: the bounds, the allowlist, the pinned commit or
 * snapshot, and what an answer does and does not prove. Pure: a function of the profile and the
 * case's contract.
 */
import { QUERY_CODECS, type ProjectQuery } from '../domain/query.js'
import { Capture } from '../events/capture.js'
import { toJsonSchema, type JsonSchema } from '../events/json-schema.js'
import type { Profile } from '../adapters/config/profile.js'
import type { SourceAnalysis } from '../research/source/common.js'
import { QUERY_KIND_DEFINITIONS } from '../projections/query-kinds/catalog.js'
import type { ToolFacts } from '../projections/query-kinds/define.js'

export type ToolQueryKind = ProjectQuery['kind']

/** A tool as tools/list describes it. */
export interface ToolSpec {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: JsonSchema & { readonly type: 'object' }
  readonly outputSchema: JsonSchema & { readonly type: 'object' }
  readonly annotations: {
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: boolean
  }
  /** The query kind the tool asks, or null for case_status. */
  readonly kind: ToolQueryKind | null
}

/** What the tools are described with: the profile's bounds and bindings, the case, the cost. */
export interface ToolContext {
  readonly profile: Profile
  /** The source analysis settings (registration prefixes, source.context bounds). */
  readonly analysis: SourceAnalysis
  /** source.context is offered: the profile enables it and the case's contract allows it. */
  readonly context: boolean
  readonly caseId: string
  readonly queryCost: number
}

/** `source.read` → `source_read`. */
export const toolName = (kind: ToolQueryKind): string => kind.replace('.', '_')

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`

/** Every object of the query contract refuses members it does not name; so does its schema. */
const closed = (s: unknown): unknown => {
  if (Array.isArray(s)) return s.map(closed)
  if (typeof s !== 'object' || s === null) return s
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, closed(v)]))
  if (out['type'] === 'object' && out['properties'] !== undefined) out['additionalProperties'] = false
  return out
}

/** The allowed tables by database, as the `table` and `database` members take them (at most 60 names). */
const allowlistText = (profile: Profile): string => {
  const db = profile.database
  if (db === undefined) return ''
  let room = 60
  const parts: string[] = []
  for (const [d, ts] of Object.entries(db.allowed_tables)) {
    const shown = ts.slice(0, Math.max(0, room))
    room -= shown.length
    if (shown.length > 0) parts.push(`${shown.join(', ')} (database ${d})`)
  }
  const all = Object.values(db.allowed_tables).reduce((n, ts) => n + ts.length, 0)
  return `${parts.join('; ')}${all > 60 ? ` and ${all - 60} more (database_tables lists them)` : ''}`
}

/**
 * A tool's input schema from a codec's: the members the tool fixes (`drop`) left out, each member
 * with its note, closed to unknown members as the decoders are.
 */
export const closedSchema = (
  schema: JsonSchema,
  notes: Readonly<Record<string, string>>,
  drop: readonly string[] = ['kind']
): ToolSpec['inputSchema'] => {
  const props = (schema['properties'] ?? {}) as Record<string, JsonSchema>
  const described = Object.fromEntries(
    Object.entries(props)
      .filter(([k]) => !drop.includes(k))
      .map(([k, v]) => [k, notes[k] === undefined ? v : { ...v, description: notes[k] }])
  )
  const required = ((schema['required'] ?? []) as string[]).filter((k) => !drop.includes(k))
  return closed({ ...schema, type: 'object', properties: described, required }) as ToolSpec['inputSchema']
}

/** What the tools of a profile are described with (the query kinds' definitions read them). */
const factsOf = (c: ToolContext): ToolFacts => {
  const src = c.profile.source
  const db = c.profile.database
  return {
    at: src === undefined ? '' : `commit ${src.commit.slice(0, 12)} of ${src.url}`,
    snapshot: db === undefined ? '' : `the world database at snapshot ${db.snapshot_id}`,
    allowlist: allowlistText(c.profile),
    databases: db?.databases ?? [],
    limits: c.profile.limits,
    analysis: c.analysis
  }
}

const recorded = (c: ToolContext): string =>
  ` Read-only: it never changes the game server's code or world. The case keeps the audit trail: every answer is recorded as evidence in case ${c.caseId} (its id heads the answer; cite it) and costs ${plural(c.queryCost, 'budget unit')}; the same call again is answered from the case at no cost. Each query has ${c.profile.limits.time_ms} ms and ${c.profile.limits.max_result_bytes} bytes of result.`

/** An object schema every member of which is required. */
const allRequired = (properties: Readonly<Record<string, JsonSchema>>) =>
  ({ type: 'object', properties, required: Object.keys(properties) }) as const

/** The structured content of an answer: the capture with the evidence it was recorded as. */
export const ANSWER_SCHEMA = allRequired({
  evidence_id: { type: 'string', description: 'the evidence id the answer is recorded as (E1, E2, …)' },
  repeat: {
    type: 'boolean',
    description: 'the answer equals earlier evidence (the same evidence, not new evidence)'
  },
  answered_from_case: {
    type: 'boolean',
    description: 'this exact call was recorded before: nothing ran, no budget was spent'
  },
  budget_left: {
    anyOf: [{ type: 'integer' }, { type: 'null' }],
    description: 'budget units the case has left (null: no limit)'
  },
  capture: toJsonSchema(Capture)
})

/** The structured content of case_status. */
export const STATUS_SCHEMA = allRequired({
  case_id: { type: 'string' },
  state: { type: 'string' },
  reason: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  budget: {
    anyOf: [
      { type: 'null' },
      allRequired({
        total: { type: 'integer' },
        consumed: { type: 'integer' },
        held: { type: 'integer' },
        left: { type: 'integer' },
        query_cost: { type: 'integer' }
      })
    ]
  },
  turn: { type: 'integer' },
  interpretation: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  hypotheses: {
    type: 'array',
    items: allRequired({
      id: { type: 'string' },
      status: { type: 'string' },
      statement: { type: 'string' },
      evidence: { type: 'array', items: { type: 'string' } }
    })
  },
  lab_tests: {
    type: 'array',
    items: allRequired({
      id: { type: 'string' },
      description: { type: 'string' },
      feedback: { anyOf: [{ type: 'string' }, { type: 'null' }] }
    })
  },
  evidence: {
    type: 'array',
    items: allRequired({
      id: { type: 'string' },
      kind: { type: 'string' },
      request: { type: 'string' },
      uri: { type: 'string' },
      first_seq: { type: 'integer' },
      repeats: { type: 'integer' }
    })
  }
})

/** The query kinds this profile (and the case's contract) enables, in the contract's order. */
export const enabledKinds = (c: ToolContext): ToolQueryKind[] =>
  Object.values(QUERY_KIND_DEFINITIONS)
    .filter((d) =>
      d.needs === 'database'
        ? c.profile.database !== undefined
        : c.profile.source !== undefined && (d.needs === 'source' || c.context)
    )
    .map((d) => d.kind)

/** The tools: one per enabled kind, then case_status. */
export const toolSpecs = (c: ToolContext): ToolSpec[] => {
  const facts = factsOf(c)
  const queries = enabledKinds(c).map(
    (kind): ToolSpec => ({
      name: toolName(kind),
      title: kind,
      description: QUERY_KIND_DEFINITIONS[kind].tool.description(facts) + recorded(c),
      inputSchema: closedSchema(toJsonSchema(QUERY_CODECS[kind]), QUERY_KIND_DEFINITIONS[kind].tool.notes(facts)),
      outputSchema: ANSWER_SCHEMA,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      kind
    })
  )
  const status: ToolSpec = {
    name: 'case_status',
    title: 'case status',
    description: `The state of case ${c.caseId}, its budget (total, consumed, held, left), what was decided (turn, interpretation, hypotheses with their status and evidence, lab tests) and the evidence recorded so far (id, kind, request, resource URI). Costs nothing; read it after a call that was cancelled or got no answer, before asking again; read any evidence again as the resource vba://evidence/<id>.`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: STATUS_SCHEMA,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    kind: null
  }
  return [...queries, status]
}
