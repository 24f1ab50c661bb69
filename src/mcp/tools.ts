/**
 * The tools `vba mcp` offers: one per query kind the profile enables, plus `case_status`. Each
 * tool's input schema is generated from the io-ts codec of its kind (the same contract as a
 * project.query, without `kind`: the tool names it), closed to unknown members as the decoder is,
 * and annotated with what an agent needs to act: the bounds, the allowlist, the pinned commit or
 * snapshot, and what an answer does and does not prove. Pure: a function of the profile and the
 * case's contract.
 */
import { QUERY_CODECS, type ProjectQuery } from '../domain/query.js'
import type { ProjectLimits } from '../domain/limits.js'
import { Capture } from '../events/capture.js'
import { toJsonSchema, type JsonSchema } from '../events/json-schema.js'
import type { Profile } from '../adapters/config/profile.js'
import type { SourceAnalysis } from '../research/source/common.js'

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

const allowlistText = (profile: Profile): string => {
  const db = profile.database
  if (db === undefined) return ''
  const names = Object.entries(db.allowed_tables).flatMap(([d, ts]) => ts.map((x) => `${d}.${x}`))
  const shown = names.slice(0, 60)
  return `${shown.join(', ')}${names.length > shown.length ? ` and ${names.length - shown.length} more (database_tables lists them)` : ''}`
}

const propertyNotes = (kind: ToolQueryKind, l: ProjectLimits, profile: Profile): Record<string, string> => ({
  text:
    kind === 'source.files'
      ? 'part of a path, literal and case-sensitive'
      : kind === 'database.tables'
        ? 'only tables whose name contains this text'
        : 'the literal text to find, case-sensitive (no regular expressions)',
  path_prefix: 'only files under this directory, relative to the repository root (e.g. src/server/scripts/)',
  symbol: 'an identifier, matched as a whole word',
  path: 'a file path relative to the repository root (source_files finds paths)',
  start_line: 'the first line to read (1-based)',
  end_line: `the last line to read (inclusive); at most ${l.max_lines} lines come back per call, the answer says where to continue`,
  table: `an allowed table (database_schema gives its columns): ${allowlistText(profile)}`,
  database: `one of the configured databases: ${(profile.database?.databases ?? []).join(', ')}`,
  columns: `the columns to return, at most ${l.max_columns}`,
  filters: `conditions joined with AND, at most ${l.max_filters}: {column, operator, value}; operators eq, ne (a null value means IS NULL / IS NOT NULL), lt, le, gt, ge, contains (% and _ are literal), in (a list of at most ${l.max_in_values} values)`,
  offset: 'rows to skip: 0 for the first page, then the next_offset of the previous answer',
  limit: `rows wanted; at most ${l.max_rows} come back per page`,
  order_by: 'sort order; the primary key is added after it, so pages never overlap or skip rows'
})

const describeProperties = (schema: JsonSchema, notes: Record<string, string>): JsonSchema => {
  const props = (schema['properties'] ?? {}) as Record<string, JsonSchema>
  const described = Object.fromEntries(
    Object.entries(props)
      .filter(([k]) => k !== 'kind')
      .map(([k, v]) => [k, notes[k] === undefined ? v : { ...v, description: notes[k] }])
  )
  const required = ((schema['required'] ?? []) as string[]).filter((k) => k !== 'kind')
  return { ...schema, properties: described, required }
}

const what = (kind: ToolQueryKind, c: ToolContext): string => {
  const l = c.profile.limits
  const src = c.profile.source
  const at = src === undefined ? '' : `commit ${src.commit.slice(0, 12)} of ${src.url}`
  const db = c.profile.database
  const snapshot = db === undefined ? '' : `the world database at snapshot ${db.snapshot_id}`
  const search = `Skipped files (binary, over ${l.max_file_bytes} bytes, symlinks, submodules) are listed; at most ${plural(l.max_matches, 'hit')} and ${plural(l.max_files, 'file')}. The result says hits_complete, hits_partial, no_hits_complete (absence within this commit and scope only, not in the running server) or no_hits_partial (a limit stopped it).`
  switch (kind) {
    case 'source.files':
      return `Paths in ${at} that contain text (tree entries: blobs, symlinks, submodules), at most ${plural(l.max_files, 'path')}; truncated says when more match. Shows what exists in the repository at that commit, not what a server loads.`
    case 'source.search':
      return `Literal, case-sensitive search of the text files of ${at}: hits as {path, line, text}. ${search}`
    case 'source.symbol':
      return `Whole-word hits of an identifier in ${at}. ${search}`
    case 'source.registration':
      return `Whole-word hits of a symbol in ${at}, plus the registration functions (prefixes ${c.analysis.registration_prefixes.join(', ')}) of the matching files: candidates for where a script is registered, not proof that it is loaded. ${search}`
    case 'source.schema':
      return `Literal hits in the .sql files of ${at}: the schema and data as committed, not the live database's.`
    case 'source.read':
      return `Lines start_line..end_line of one file of ${at}, numbered, at most ${plural(l.max_lines, 'line')} per call (a larger window is served from start_line and says where to continue); lines over ${l.max_line_chars} characters are cut and marked.`
    case 'source.context': {
      const a = c.analysis
      return `A bounded lexical chain for text in ${at}: its hits, identifiers assigned from it and registration functions of the matching files, as merged context blocks (${a.context_lines} lines of context, at most ${plural(a.max_searches, 'search')}, ${plural(a.max_blocks, 'block')}, ${plural(a.max_total_lines, 'line')}). Lexical context, not a call graph: complete_configured_source_context only means the bounded chain ran without omissions.`
    }
    case 'database.tables':
      return `Which allowed tables exist in ${snapshot}, read-only. Allowed: ${allowlistText(c.profile)}.`
    case 'database.schema':
      return `Columns (name, type, nullability, key), primary key and indexes of one allowed table of ${snapshot}.`
    case 'database.rows':
      return `One page of rows of an allowed table of ${snapshot}, read-only: the chosen columns, filters joined with AND, from offset, at most ${plural(l.max_rows, 'row')}. has_more and next_offset say how to continue; complete_filtered_rows is true only when the page holds every matching row. Values are exact (DECIMAL and BIGINT as strings, NULL as null). Template data says what the data is, not what a running server did.`
    case 'database.count':
      return `The number of rows of an allowed table of ${snapshot} that match the filters (joined with AND), read-only.`
    default: {
      const _never: never = kind
      return String(_never)
    }
  }
}

const recorded = (c: ToolContext): string =>
  ` Every answer is recorded as evidence in case ${c.caseId} (its id heads the answer; cite it) and costs ${plural(c.queryCost, 'budget unit')}; the same call again is answered from the case at no cost. Each query has ${c.profile.limits.time_ms} ms and ${c.profile.limits.max_result_bytes} bytes of result.`

/** The structured content of an answer: the capture with the evidence it was recorded as. */
export const ANSWER_SCHEMA = {
  type: 'object',
  properties: {
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
  },
  required: ['evidence_id', 'repeat', 'answered_from_case', 'budget_left', 'capture']
} as const

/** The structured content of case_status. */
export const STATUS_SCHEMA = {
  type: 'object',
  properties: {
    case_id: { type: 'string' },
    state: { type: 'string' },
    reason: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    budget: {
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          properties: {
            total: { type: 'integer' },
            consumed: { type: 'integer' },
            held: { type: 'integer' },
            left: { type: 'integer' },
            query_cost: { type: 'integer' }
          },
          required: ['total', 'consumed', 'held', 'left', 'query_cost']
        }
      ]
    },
    evidence: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          kind: { type: 'string' },
          request: { type: 'string' },
          uri: { type: 'string' },
          first_seq: { type: 'integer' },
          repeats: { type: 'integer' }
        },
        required: ['id', 'kind', 'request', 'uri', 'first_seq', 'repeats']
      }
    }
  },
  required: ['case_id', 'state', 'reason', 'budget', 'evidence']
} as const

/** The query kinds this profile (and the case's contract) enables, in the contract's order. */
export const enabledKinds = (c: ToolContext): ToolQueryKind[] =>
  (Object.keys(QUERY_CODECS) as ToolQueryKind[]).filter((k) =>
    k.startsWith('database.')
      ? c.profile.database !== undefined
      : c.profile.source !== undefined && (k !== 'source.context' || c.context)
  )

/** The tools: one per enabled kind, then case_status. */
export const toolSpecs = (c: ToolContext): ToolSpec[] => {
  const queries = enabledKinds(c).map(
    (kind): ToolSpec => ({
      name: toolName(kind),
      title: kind,
      description: what(kind, c) + recorded(c),
      inputSchema: closed(
        describeProperties(toJsonSchema(QUERY_CODECS[kind]), propertyNotes(kind, c.profile.limits, c.profile))
      ) as ToolSpec['inputSchema'],
      outputSchema: ANSWER_SCHEMA,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      kind
    })
  )
  const status: ToolSpec = {
    name: 'case_status',
    title: 'case status',
    description: `The state of case ${c.caseId}, its budget (total, consumed, held, left) and the evidence recorded so far (id, kind, request, resource URI). Costs nothing; read any evidence again as the resource vba://evidence/<id>.`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: STATUS_SCHEMA,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    kind: null
  }
  return [...queries, status]
}
