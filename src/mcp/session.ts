/**
 * An MCP session bound to one prepared case: the start-up checks (the case exists and verifies on
 * open, it has a completed revision, no worker holds its lease), which change nothing in the case;
 * then one recorded query per research call through `queryInCase` (the same path as `vba case
 * query`: reservation, capture, settlement, lock per append), one turn per decision call
 * (decisions.ts), and read-only views of the evidence. A prepared case that has not started is
 * started with the profile's settings (as `vba investigate` does, so the case's budget bounds the
 * agent) by the first call that records something. The calls that write are run one after the
 * other for the whole session (every client of one server), so they never race each other.
 *
 * The command id of a call is derived from the digest of its decoded request and of what binds
 * research (source commit, database snapshot and allowlist, limits, analysis settings): an
 * identical call is answered from the case (no budget, nothing run), while the same request under
 * another binding (a new commit) is a new question.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure } from '../failures/failure.js'
import { decodeQuery } from '../domain/query.js'
import type { CaseState } from '../domain/case-state.js'
import { queryCost, remainingBudget, budgetTotal, heldBudget } from '../domain/budget.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { Capture } from '../events/capture.js'
import type { Requester } from '../events/catalog.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import type { Profile } from '../adapters/config/profile.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { FailureError, must, thrownFailure } from '../failures/error.js'
import { requestText } from '../projections/request-text.js'
import type { QueueEntry } from '../projections/queue.js'
import { queryInCase } from '../commands/case-query.js'
import type { ProjectResearch } from '../research/project-research.js'
import { analysisOf } from '../research/source/open.js'
import { openAt } from '../commands/run.js'
import { startInvestigation } from '../commands/lifecycle-commands.js'
import { startSettings } from '../investigation/settings.js'
import {
  captureAnswerText,
  evidenceUri,
  InvalidParams,
  queryAnswer,
  refusalAnswer,
  type ToolAnswer
} from './answers.js'
import { toolSpecs, type ToolQueryKind, type ToolSpec } from './tools.js'
import { statusAnswer } from './case-status.js'
import { decisionArgsFailure, decisionSpecs, recordDecision, type DecisionName } from './decisions.js'
import { settingsOf } from '../investigation/settings.js'
import { parseBoundedBytes } from '../events/bounds.js'

export interface SessionOptions {
  readonly at: CaseAt
  readonly profile: Profile
  readonly research: ProjectResearch
  /** The live lease on the case (a SQL store): a case a worker holds is refused. */
  readonly leaseOf?: () => Promise<QueueEntry['lease']>
  readonly env?: Env
}

/** One piece of evidence as case_status and resources/list show it. */
export interface EvidenceEntry {
  readonly id: string
  readonly kind: string
  readonly request: string
  readonly uri: string
  readonly first_seq: number
  readonly repeats: number
}

/** What changed in the case after a call: the tools it offers, the evidence it holds. */
export interface SessionChange {
  readonly tools: boolean
  readonly evidence: boolean
}

export interface McpSession {
  readonly caseId: string
  readonly at: CaseAt
  /** Starts a case that has not started (as the first recording call would); nothing otherwise. */
  readonly start: () => Promise<void>
  /** The tools the case offers in its state as last read (a concluded case: case_status only). */
  readonly tools: () => readonly ToolSpec[]
  /** Reads the case again (another writer may have moved it on): its state, tools and evidence. */
  readonly refresh: () => Promise<void>
  /** The state, budget and size of the case at start-up, for the operator's log. */
  readonly summary: string
  /**
   * Asks `kind` with the tool's arguments, recorded in the case and attributed to `requester`.
   * Arguments the tool's input schema refuses throw {@link InvalidParams} (nothing recorded).
   */
  readonly query: (kind: ToolQueryKind, args: unknown, requester: Requester) => Promise<ToolAnswer>
  /** Records the decision `name` as a turn attributed to `requester` (InvalidParams as for query). */
  readonly decide: (name: DecisionName, args: unknown, requester: Requester) => Promise<ToolAnswer>
  /** Calls `listener` after every call that changed the tool set or the evidence; returns the unsubscribe. */
  readonly subscribe: (listener: (change: SessionChange) => void) => () => void
  readonly status: () => Promise<ToolAnswer>
  readonly evidence: () => Promise<EvidenceEntry[]>
  /** One piece of evidence as compact text and as its canonical capture, or null when unknown. */
  readonly readEvidence: (id: string) => Promise<{ readonly text: string; readonly json: string } | null>
  /** Resolves once no call is in flight. */
  readonly idle: () => Promise<void>
}

const hex = (digest: string): string => digest.slice('sha256:'.length)

/** The digest of what binds research: the same request under another binding is another question. */
export const bindingDigest = (p: Profile): string => {
  const s = p.source
  const d = p.database
  const binding = {
    source: s === undefined ? null : { url: s.url, commit: s.commit, extensions: s.extensions ?? null },
    database:
      d === undefined
        ? null
        : { client: d.client, databases: d.databases, snapshot_id: d.snapshot_id, allowed_tables: d.allowed_tables },
    limits: p.limits,
    analysis: analysisOf(p)
  }
  return sha256Digest(must(canonicalJson(binding)))
}

/**
 * The case's budget; before the start, the one the start will record (the profile's settings: the
 * first call that records something starts the case with them). Null: no budget limit.
 */
const budgetOf = (
  state: CaseState,
  profile: Profile
): { total: number; consumed: number; held: number; left: number; query_cost: number } | null => {
  const starting = state.settings === null ? settingsOf(profile) : null
  const s = starting === null ? state : E.isRight(starting) ? { ...state, settings: starting.right } : state
  return s.settings === null
    ? null
    : {
        total: budgetTotal(s),
        consumed: s.research.consumed,
        held: heldBudget(s.research),
        left: remainingBudget(s),
        query_cost: queryCost(s)
      }
}

const checkStart = async (o: SessionOptions): Promise<CaseHandle> => {
  const lease = o.leaseOf === undefined ? null : await o.leaseOf()
  if (lease !== null)
    throw new FailureError(
      failure(
        'CASE_LEASED',
        `the case is being worked on by ${lease.worker} until ${lease.expires_at}; start vba mcp once the worker has released it`,
        { worker: lease.worker, expires_at: lease.expires_at }
      )
    )
  const handle = await openAt(o.at)
  const s = handle.cursor.state
  if (!s.revisions.some((r) => r.completed))
    throw new FailureError(
      failure(
        'CASE_NOT_PREPARED',
        'the case has no completed revision: record the bug report and run its preparation first (vba case prepare)'
      )
    )
  return handle
}

const readCapture = async (h: CaseHandle, digest: string): Promise<Capture | null> => {
  const ref = h.cursor.state.research.evidenceRefs.get(digest)
  if (ref === undefined) return null
  const decoded = Capture.decode(parseBoundedBytes(await h.store.readObject(h.ref, ref)))
  return E.isRight(decoded) ? decoded.right : null
}

/** The evidence of a case; request lines are cached by capture digest (captures never change). */
const evidenceOf = async (h: CaseHandle, requests: Map<string, string>): Promise<EvidenceEntry[]> => {
  const out: EvidenceEntry[] = []
  for (const e of h.cursor.state.research.evidence.values()) {
    let request = requests.get(e.digest)
    if (request === undefined) {
      const c = await readCapture(h, e.digest)
      request = c === null ? e.kind : requestText(c.kind, c.request)
      requests.set(e.digest, request)
    }
    out.push({ id: e.id, kind: e.kind, request, uri: evidenceUri(e.id), first_seq: e.first_seq, repeats: e.repeats })
  }
  return out
}

const statusAnswerOf = async (h: CaseHandle, requests: Map<string, string>, profile: Profile): Promise<ToolAnswer> =>
  statusAnswer(h, await evidenceOf(h, requests), budgetOf(h.cursor.state, profile))

const evidenceText = async (h: CaseHandle, id: string): Promise<{ text: string; json: string } | null> => {
  const e = h.cursor.state.research.evidence.get(id)
  const c = e === undefined ? null : await readCapture(h, e.digest)
  if (e === undefined || c === null) return null
  const header = `${e.id}: recorded evidence (first recorded at seq ${e.first_seq}${e.repeats > 0 ? `, repeated ${e.repeats} time(s)` : ''}; reading it again costs nothing)`
  return { text: captureAnswerText(header, c), json: must(canonicalJson(c)) }
}

/** Runs work with the same key one after the other, and knows what is in flight. */
const serialiser = (): { run: <A>(key: string, work: () => Promise<A>) => Promise<A>; idle: () => Promise<void> } => {
  const chains = new Map<string, Promise<unknown>>()
  return {
    run: (key, work) => {
      const next = (chains.get(key) ?? Promise.resolve()).then(work, work)
      chains.set(key, next)
      const done = (): void => {
        if (chains.get(key) === next) chains.delete(key)
      }
      next.then(done, done)
      return next
    },
    idle: async () => {
      while (chains.size > 0) await Promise.allSettled([...chains.values()])
    }
  }
}

/** How often a decision is decided again when another writer moved the case on meanwhile. */
const DECISION_ROUNDS = 5

const queryCostOf = (state: CaseState, profile: Profile): number => {
  if (state.settings !== null) return queryCost(state)
  const settings = settingsOf(profile)
  return E.isRight(settings) ? (settings.right.action_costs['project.query'] ?? 1) : 1
}

/** The tools a case offers in `state`: research while it may research, the decisions of its phase, case_status. */
const toolsOf = (o: SessionOptions, state: CaseState, caseId: string): ToolSpec[] => {
  const analysis = analysisOf(o.profile)
  const context = o.profile.source !== undefined && analysis.enabled && state.settings?.source_context !== null
  const all = toolSpecs({ profile: o.profile, analysis, context, caseId, queryCost: queryCostOf(state, o.profile) })
  const status = all.filter((t) => t.kind === null)
  if (state.state === 'CONCLUDED' || state.state === 'EXHAUSTED') return status
  return [...all.filter((t) => t.kind !== null), ...decisionSpecs(state.state, caseId), ...status]
}

/** The arguments of a research call as its query, or why the tool's input schema refuses them. */
const requestOf = (kind: ToolQueryKind, args: unknown): Record<string, unknown> => {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new InvalidParams('QUERY_INVALID: the arguments are a JSON object')
  if ('kind' in args)
    throw new InvalidParams(`QUERY_INVALID: the tool names the kind (${kind}); leave "kind" out of the arguments`)
  const request = { ...args, kind }
  const decoded = decodeQuery(request)
  if (E.isLeft(decoded)) throw new InvalidParams(`${decoded.left.code}: ${decoded.left.message.slice(0, 400)}`)
  return request
}

type Writing = (work: () => Promise<ToolAnswer>, decision: boolean) => Promise<ToolAnswer>

/** A session's research call: its command id from the digest of the decoded request and the binding. */
const researchCall =
  (o: SessionOptions, env: Env, binding: string, writing: Writing) =>
  async (kind: ToolQueryKind, args: unknown, requester: Requester): Promise<ToolAnswer> => {
    const request = requestOf(kind, args)
    const canonical = canonicalJson(must(decodeQuery(request)))
    if (E.isLeft(canonical)) throw new InvalidParams(`${canonical.left.code}: ${canonical.left.message}`)
    // Identical calls share a command id: the second is answered from the case (after the first).
    const commandId = `mcp-${hex(sha256Digest(canonical.right)).slice(0, 32)}-${binding}`
    return writing(
      async () => queryAnswer(await queryInCase(o.at, o.research, request, commandId, { requester, env })),
      false
    )
  }

/** A session's decision call: decided again, a few rounds, on the state another writer left. */
const decisionCall =
  (o: SessionOptions, env: Env, writing: Writing) =>
  async (name: DecisionName, args: unknown, requester: Requester): Promise<ToolAnswer> => {
    const refused = decisionArgsFailure(name, args)
    if (refused !== null) throw new InvalidParams(refused)
    // Another writer (another server on the case) may move it on between the prompt and the
    // answer: the turn is decided again on the state it left, a few rounds, before telling.
    return writing(async () => {
      for (let round = 1; ; round++) {
        try {
          return await recordDecision(o.at, name, args as Record<string, unknown>, requester, env)
        } catch (e) {
          if (round >= DECISION_ROUNDS || thrownFailure(e).code !== 'GENERATION_CONFLICT') throw e
        }
      }
    }, true)
  }

/** Opens the session: the start-up checks, then the tools the profile and the case's contract enable. */
export const openMcpSession = async (o: SessionOptions): Promise<McpSession> => {
  const env = o.env ?? systemEnv
  const handle = await checkStart(o)
  let state = handle.cursor.state
  const caseId = handle.declaration.case_id
  let tools = toolsOf(o, state, caseId)
  const binding = hex(bindingDigest(o.profile)).slice(0, 12)
  const calls = serialiser()
  const requests = new Map<string, string>()
  const listeners = new Set<(change: SessionChange) => void>()
  const known = new Set(state.research.evidence.keys())
  const notify = (change: SessionChange): void => {
    if (change.tools || change.evidence) for (const l of listeners) l(change)
  }
  /** Reads the case again: its state, its tools, its evidence (and tells what changed). */
  const refresh = async (): Promise<void> => {
    const names = tools.map((t) => t.name).join(',')
    state = (await openAt(o.at).catch(() => null))?.cursor.state ?? state
    tools = toolsOf(o, state, caseId)
    const fresh = [...state.research.evidence.keys()].filter((id) => !known.has(id))
    for (const id of fresh) known.add(id)
    notify({ tools: tools.map((t) => t.name).join(',') !== names, evidence: fresh.length > 0 })
  }
  const startIfNot = async (): Promise<void> => {
    if (state.state !== 'NOT_STARTED') return
    if ((await openAt(o.at)).cursor.state.state === 'NOT_STARTED')
      await startInvestigation(o.at, { settings: must(await startSettings(o.profile, o.research)), env })
    await refresh()
  }
  /**
   * One writing call after the other (the whole session), the case started first if it was not.
   * A decision (or a refusal that says the case moved on) reads the case again for its tools; a
   * research answer only tells its new evidence (no second read of the case per call).
   */
  const writing: Writing = (work, decision) =>
    calls.run(caseId, async () => {
      let answer: ToolAnswer
      try {
        await startIfNot()
        answer = await work()
      } catch (e) {
        answer = refusalAnswer(thrownFailure(e))
      }
      const text = answer.content[0]?.text ?? ''
      if (decision || /^(BUDGET_EXHAUSTED|CASE_CLOSED|CASE_NOT_ADVANCEABLE|GENERATION_CONFLICT):/.test(text))
        await refresh()
      else {
        const id = answer.structuredContent?.['evidence_id']
        if (typeof id === 'string' && !known.has(id)) {
          known.add(id)
          notify({ tools: false, evidence: true })
        }
      }
      return answer
    })
  const query = researchCall(o, env, binding, writing)
  const decideCall = decisionCall(o, env, writing)
  const budget = budgetOf(state, o.profile)
  return {
    caseId,
    at: o.at,
    start: async () => {
      const answer = await writing(async () => ({ content: [] }), false)
      if (answer.isError === true)
        throw new FailureError(failure('CASE_NOT_ADVANCEABLE', answer.content[0]?.text ?? ''))
    },
    tools: () => tools,
    refresh: () => calls.run(caseId, refresh),
    summary: `case ${caseId}: ${state.state}${state.state === 'NOT_STARTED' ? " (the first call that records something starts it with the profile's settings)" : ''}, ${budget === null ? 'no budget limit' : `budget ${budget.left} left of ${budget.total}`}, ${state.research.evidence.size} evidence; ${tools.filter((t) => t.kind !== null).length} research tools`,
    query,
    decide: decideCall,
    subscribe: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    status: async () => {
      try {
        return await statusAnswerOf(await openAt(o.at), requests, o.profile)
      } catch (e) {
        return refusalAnswer(thrownFailure(e))
      }
    },
    evidence: async () => evidenceOf(await openAt(o.at), requests),
    readEvidence: async (id) => evidenceText(await openAt(o.at), id),
    idle: calls.idle
  }
}
