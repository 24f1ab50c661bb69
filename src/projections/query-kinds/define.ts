/**
 * What a query kind is, besides its request codec (src/events/query-requests.ts) and its executor
 * (src/research): one definition per kind, in a file of its own beside this one, read by every
 * place that shows or offers a query (the prompt's contract and capture text, the request text,
 * the report, the MCP tools, re-derivation). The catalog (catalog.ts) is mapped by kind, so a
 * kind without a definition does not compile. Pure.
 */
import type { Capture } from '../../events/capture.js'
import type { QueryKind } from '../../events/query-requests.js'
import type { ProjectLimits } from '../../domain/limits.js'
import type { Rec } from '../json-read.js'
import type { Wording } from './parts.js'

/** One unit a prompt guard may leave out (a row, a line, a hit, a block, a path, a column), with its lines. */
export interface CaptureItem {
  readonly lines: readonly string[]
}

/**
 * A capture for the prompt: `head` (what was asked and answered), `items` and `tail(shown)` (the
 * markers when the first `shown` items are shown: limits, truncation, skips, continuation).
 */
export interface CaptureView {
  readonly head: readonly string[]
  readonly items: readonly CaptureItem[]
  readonly tail: (shown: number) => readonly string[]
  /** What an item is, plural ("rows", "lines", "hits", "blocks", "paths", "columns"). */
  readonly unit: string
  /** What the capture held, in a few words. */
  readonly summary: string
}

/** What an MCP tool is described with: the bound world, its bounds, the source analysis settings. */
export interface ToolFacts {
  /** `commit <12 hex> of <url>`, or empty without a source. */
  readonly at: string
  /** `the world database at snapshot <id>`, or empty without a database. */
  readonly snapshot: string
  /** The allowed tables as `database.table`, the first 60 and how many more. */
  readonly allowlist: string
  readonly databases: readonly string[]
  readonly limits: ProjectLimits
  readonly analysis: {
    readonly registration_prefixes: readonly string[]
    readonly context_lines: number
    readonly max_searches: number
    readonly max_blocks: number
    readonly max_total_lines: number
  }
}

/** What must be configured for a kind to be offered: a source, a database, or source.context's settings. */
export type QueryNeeds = 'source' | 'database' | 'source_context'

/** Everything about one query kind that is not its request codec or its executor. */
export interface QueryKindDefinition<K extends QueryKind = QueryKind> {
  readonly kind: K
  readonly needs: QueryNeeds
  /** The kind in the prompt's query contract: its members, optional ones marked `?`. */
  readonly signature: string
  /** The search options it takes (`ignore_case?, whole_number?`), named in contracts of starts that record `search_options`. */
  readonly options?: string
  /** The request in one line. */
  readonly requestText: (request: Rec) => string
  /** What a prompt (and an MCP answer) shows of a capture of this kind, its counts worded as `w` says. */
  readonly view: (c: Capture, r: Rec, w: Wording) => CaptureView
  /** The capture's body in the case report (HTML). */
  readonly reportBody: (c: Capture, r: Rec) => string
  /** The MCP tool: what it does, and a note on each member of its request. */
  readonly tool: {
    readonly description: (f: ToolFacts) => string
    readonly notes: (f: ToolFacts) => Readonly<Record<string, string>>
  }
  /** Why a capture of this kind cannot be asked again by this library (re-derivation), or null. */
  readonly notRecheckable: (c: Capture) => string | null
}

/** The signature of `d` in a contract, with its search options when the start records them. */
export const signatureOf = (d: QueryKindDefinition, withOptions: boolean): string =>
  withOptions && d.options !== undefined ? `${d.signature.slice(0, -1)}, ${d.options}}` : d.signature

/** A query kind's definition (typed by its kind). */
export const defineQueryKind = <K extends QueryKind>(d: QueryKindDefinition<K>): QueryKindDefinition<K> => d

/** For the kinds whose every capture can be asked again. */
export const alwaysRecheckable = (): null => null
