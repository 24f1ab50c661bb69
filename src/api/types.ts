/**
 * The shapes of the public client (client.ts is the implementation): its options, its
 * namespaces and what their methods take and return.
 */
import type { Author } from '../domain/inputs-decider.js'
import type { Capture } from '../events/capture.js'
import type { InvestigationSettings } from '../events/settings.js'
import type { RecordedEvent } from '../events/chain.js'
import type { Finding } from '../events/findings.js'
import type { Receipt } from '../adapters/case-store/append.js'
import type { VerifyReport } from '../adapters/case-store/verify.js'
import type { GcReport } from '../adapters/case-store/gc.js'
import type { LockState } from '../adapters/case-store/lock.js'
import type { Signer } from '../adapters/ssh-keys.js'
import type { Profile } from '../adapters/config/profile.js'
import type { Env } from '../adapters/env.js'
import type { ExportReport } from '../adapters/bagit/export.js'
import type { BagCheck, ImportReport } from '../adapters/bagit/import.js'
import type { LifecycleView } from '../projections/lifecycle-view.js'
import type { RenderedPrompt } from '../projections/prompt.js'
import type { SnapshotNotice } from '../adapters/git/snapshot.js'
import type { CaseQueryResult } from '../commands/case-query.js'
import type { PrepareResult, RevisionInputs } from '../commands/prepare.js'
import type { Fact } from '../research/enrich.js'
import type { AdvanceStep, ModelFn } from '../investigation/loop.js'
import type { AdvanceResult } from '../commands/lifecycle-commands.js'
import type { QueueApi } from './queue-types.js'

export type { QueueApi, WorkOptions } from './queue-types.js'

/** A notice about the persisted snapshot index of a source commit. @category Client */
export type SourceNotice = SnapshotNotice

/** A profile as a plain object: the same sections as the TOML file. @category Client */
export type ProfileObject = Readonly<Record<string, unknown>>

/** Options of {@link openVba}. @category Client */
export interface VbaOptions {
  /**
   * The project profile: the path of a TOML file, or the same sections as a plain object
   * (`{ source: {…}, database: {…}, limits: {…} }`). Without a profile, cases can be written,
   * verified, replayed and moved, but no research runs.
   */
  readonly profile?: string | ProfileObject | undefined
  /** Where the relative paths of an object profile resolve (default: the working directory). */
  readonly baseDir?: string | undefined
  /** Environment variables for `password_env` and the snapshot index location (`XDG_CACHE_HOME`, `HOME`) (default: `process.env`). */
  readonly environment?: Readonly<Record<string, string | undefined>> | undefined
  /** Clock and id source (tests pin them; default: the system clock and random UUIDs). */
  readonly clock?: Env | undefined
  /**
   * Who signs every command this client appends (a `CommandSigned` event ends each): a key read
   * with `readSigner(path)` (an OpenSSH Ed25519 key file). Default: the profile's `[signing]` key
   * (read when the client opens), else the clock's signer, else none.
   */
  readonly signer?: Signer | undefined
  /**
   * A SQL store of cases (`postgres://user@host:5432/db` or `mysql://user@host:3306/db`, a
   * password through `?password_env=VAR`). With a store, every `dir` argument is a case id in it,
   * and `queue` can claim work. Without one, cases are directories.
   */
  readonly store?: string | undefined
  /** Run the store's schema migrations when the client opens (default false: `vba store migrate`). */
  readonly migrate?: boolean | undefined
  /**
   * Told when the persisted snapshot index of the source commit is built, found damaged (it is then
   * rebuilt, never served) or cannot be written (research then reads git directly). The index lives
   * in `[source] cache_dir`, else `$XDG_CACHE_HOME/vba`, else `~/.cache/vba`; `cache = false` in
   * `[source]` turns it off.
   */
  readonly onNotice?: ((notice: SourceNotice) => void) | undefined
}

/** What an append returns: the command's outcome and its receipt (keep it; see `verify`). @category cases */
export interface Appended {
  /** `appended`, or `duplicate` when the command id was recorded before (nothing new written). */
  readonly status: 'appended' | 'duplicate'
  readonly commandId: string
  /** The case's generation (its last seq) after the command. */
  readonly generation: number
  /** The command's last event as `{seq, hash}`: proof against a later rollback. */
  readonly receipt: Receipt
}

/** Options every write takes. @category Client */
export interface WriteOptions {
  /** Idempotency key: a retry with the same id returns the recorded outcome (default: a new id). */
  readonly commandId?: string | undefined
  /** Refuse with GENERATION_CONFLICT unless the case is at this generation. */
  readonly expectedGeneration?: number | undefined
}

/** The state of a case: its lifecycle, budget, hypotheses and conclusion, at its head. @category cases */
export interface CaseStatus extends LifecycleView {
  readonly case_id: string
  readonly title: string | null
  /** The last seq (every event counts). */
  readonly generation: number
  readonly head: Receipt
  /** Crash leftovers seen (notices; they do not make the case invalid). */
  readonly notices: readonly Finding[]
}

/** The cases: create, write notes and attachments, read their state, verify, replay, clean up. @category cases */
export interface CasesApi {
  /** Creates an empty case: a package in `dir` (which must not exist or be empty), or the case id `dir` in the store. */
  create(
    dir: string,
    options?: { readonly id?: string | undefined; readonly title?: string | undefined }
  ): Promise<{ readonly case_id: string; readonly dir: string }>
  /** Records a note by an operator (default) or the controller. */
  note(
    dir: string,
    note: {
      readonly text: string
      readonly format?: 'plain' | 'markdown' | undefined
      readonly author?: Author | undefined
    } & WriteOptions
  ): Promise<Appended>
  /** Adds a file handed in by a person (a log, a screenshot) as an object. */
  attach(
    dir: string,
    attachment: {
      readonly name: string
      readonly bytes: Uint8Array
      readonly mediaType?: string | undefined
      readonly author?: Author | undefined
    } & WriteOptions
  ): Promise<Appended>
  /** The case's state at its head, folded from the log alone. */
  status(dir: string): Promise<CaseStatus>
  /** The facts of the latest completed revision, or null before the first one. */
  facts(dir: string): Promise<readonly Fact[] | null>
  /** Every event, decoded and upcast, in order (for your own views). */
  events(dir: string): Promise<readonly RecordedEvent[]>
  /**
   * Full verification: chain, rules, every object; with `expectHead` (a receipt kept elsewhere),
   * a rollback or a fork is a finding. Problems of the case are findings, never a rejection.
   */
  verify(dir: string, options?: VerifyCaseOptions): Promise<VerifyReport>
  /** The case report: one self-contained HTML page (deterministic; no script, no outside resource). */
  report(dir: string, options?: ReportCaseOptions): Promise<string>
  /** Every projection's view, from the log alone. */
  replay(dir: string): Promise<{
    readonly case_id: string
    readonly generation: number
    readonly head_hash: string
    readonly views: Record<string, { readonly version: number; readonly view: unknown }>
  }>
  /** Removes what interrupted writers left (orphan objects, old temporary files, a torn tail). Directories only. */
  gc(dir: string): Promise<GcReport>
  /** Removes the lock of a writer that is gone (a live one only with `force`). Directories only. */
  unlock(dir: string, options?: { readonly force?: boolean | undefined }): Promise<LockState>
}

/** Options of {@link CasesApi.verify}. @category cases */
export interface VerifyCaseOptions {
  /**
   * A receipt kept outside the case: a rollback or a fork is then a finding. As text: `SEQ:HASH`,
   * or a signed head as `vba head --sign-key` prints it (a C2SP signed note), whose signatures are
   * checked against `trust` (which it needs): `signed_head` in the report names its signers.
   */
  readonly expectHead?: Receipt | string | undefined
  readonly onProgress?: ((phase: 'log' | 'objects' | 'evidence', done: number, total: number) => void) | undefined
  /**
   * Re-derive every capture from the world a profile reaches (a TOML file, the sections as an
   * object, or `true` for the client's own profile): source captures at the commit they name, from
   * git objects; database captures when the profile's snapshot id is theirs. A difference is an
   * EVIDENCE_MISMATCH error finding; `evidence` says what was checked.
   */
  readonly against?: string | ProfileObject | true | undefined
  /**
   * Every rule applies, for cases of any age: what the rules could not check (RULE_NOT_APPLIED:
   * an old event version that lacks what a rule needs, no binding recorded) is an error finding
   * instead of a notice. A case this library writes today verifies under it.
   */
  readonly strict?: boolean | undefined
  /**
   * Whom to trust for signed commands: the text of an allowed_signers file (git's and OpenSSH's
   * format) and, optionally, the actors each principal may sign for. A signature by a key it does
   * not allow is a SIGNER_UNTRUSTED error finding; `signatures` in the report names every signer.
   */
  readonly trust?:
    | {
        readonly allowedSigners: string
        readonly actors?: Readonly<Record<string, readonly string[]>> | undefined
      }
    | undefined
  /** Every command must be signed: an unsigned one is an UNSIGNED_COMMAND error finding. */
  readonly requireSigned?: boolean | undefined
}

/** Options of {@link CasesApi.report}. @category cases */
export interface ReportCaseOptions {
  /**
   * Re-derive the evidence first (as {@link VerifyCaseOptions.against}); the page then says at
   * which commit and snapshot, and with what result. Without it the page claims only that the
   * chain and the rules hold.
   */
  readonly against?: string | ProfileObject | true | undefined
  readonly onProgress?: VerifyCaseOptions['onProgress'] | undefined
}

/** Research: one project.query without a case, or recorded in one. @category research */
export interface ResearchApi {
  /** Decodes `args` as a project.query and answers it with a capture (nothing is recorded). */
  query(args: unknown): Promise<Capture>
  /**
   * Runs a query inside a case: reserves budget for exactly this request, records the capture as
   * evidence (or the failure). The same `commandId` retries the same reservation after an outage.
   */
  queryInCase(
    dir: string,
    args: unknown,
    options?: { readonly commandId?: string | undefined }
  ): Promise<CaseQueryResult>
}

/** Options of {@link InvestigationsApi.advance}. @category investigations */
export interface AdvanceOptions {
  /** Your model: a request in (prompt, stable prefix, turn, phase, abort signal), the raw answer out. */
  readonly model: ModelFn
  /** Model turns to run at most in this call (default 20). */
  readonly maxTurns?: number | undefined
  /** Resume a timed block or retry research now, before its retry time (recorded). */
  readonly manualRetry?: boolean | undefined
  readonly expectedGeneration?: number | undefined
  /**
   * Stops the loop between steps, and is handed to the model function. A model call in flight when
   * it aborts is abandoned at once, whether or not the model function honours the signal: `advance`
   * resolves with `cancelled: true`, the turn's request recorded without an answer, and whatever the
   * abandoned call later returns or throws is ignored.
   */
  readonly signal?: AbortSignal | undefined
  /** Called after every step (a model turn, research, a resume); what it throws ends the call and is rethrown unchanged. */
  readonly onStep?: ((step: AdvanceStep) => void) | undefined
}

/** Investigations: prepare a revision, start, advance with your model, resume, feedback. @category investigations */
export interface InvestigationsApi {
  /**
   * Records a bug report (and its entities and attachments) as a revision and runs the profile's
   * `[enrichment]`. The same inputs again change nothing (unless `again`); new inputs make a new revision.
   * Inputs of another shape are refused with `INPUT_INVALID` naming the member, before anything is recorded.
   */
  prepare(
    dir: string,
    inputs: RevisionInputs,
    /**
     * `extract: false` finds no entities in the report (the profile's `[[enrichment.extract]]` patterns are not used);
     * `again: true` prepares inputs a completed revision holds again: a new revision with fresh enrichment.
     */
    options?: {
      readonly author?: Author | undefined
      readonly extract?: boolean | undefined
      readonly again?: boolean | undefined
    }
  ): Promise<PrepareResult>
  /** Starts the investigation from the latest completed revision, with the profile's settings. */
  start(
    dir: string,
    options?: { readonly settings?: InvestigationSettings | undefined; readonly commandId?: string | undefined }
  ): Promise<{ readonly generation: number }>
  /**
   * Runs the loop until the case concludes, is exhausted or blocked, or `maxTurns` model turns ran.
   * A model function that throws is recorded, and the case waits as MODEL_UNAVAILABLE.
   */
  advance(dir: string, options: AdvanceOptions): Promise<AdvanceResult>
  /** Resumes a case blocked for invalid answers or an unavailable model (see the retry time). */
  resume(
    dir: string,
    options: { readonly manualRetry: boolean; readonly expectedGeneration?: number | undefined }
  ): Promise<AdvanceResult>
  /** Records lab test feedback; a case waiting for it continues. */
  feedback(
    dir: string,
    feedback: { readonly requestId: string; readonly text: string; readonly commandId?: string | undefined }
  ): Promise<{ readonly generation: number }>
  /** An operator cancels the confirmed plan waiting to be carried out; its budget is released. */
  cancelPlan(
    dir: string,
    options: { readonly reason: string; readonly reservationId?: string | undefined } & WriteOptions
  ): Promise<Appended>
  /** An operator adds budget to a running investigation, with a reason. */
  topUp(dir: string, options: { readonly amount: number; readonly reason: string } & WriteOptions): Promise<Appended>
  /**
   * The next prompt, rendered from the log and its objects (what the model would see), as plain
   * data: `{ text, stable, version, cut }`, each an own property (JSON, a spread and
   * structuredClone keep them).
   */
  nextPrompt(dir: string): Promise<RenderedPrompt>
}

/** Transport: BagIt bags (deterministic tar or directory), verified before anything is imported. @category transport */
export interface TransportApi {
  /**
   * Exports a case as a BagIt 1.0 bag: a deterministic tar (default) or a directory. An existing
   * `out` is refused (OUTPUT_EXISTS) unless `force`, which replaces a regular file only; its
   * directory must exist (OUTPUT_DIR_MISSING).
   */
  export(
    dir: string,
    out: string,
    options?: {
      readonly format?: 'tar' | 'dir' | undefined
      readonly force?: boolean | undefined
      readonly onProgress?: ((done: number, total: number) => void) | undefined
    }
  ): Promise<ExportReport>
  /** Verifies a bag completely, then moves its case into `dir`. */
  import(
    archive: string,
    dir: string,
    options?: {
      readonly onProgress?: ((done: number, total: number) => void) | undefined
      /** Refuse a case whose rules did not all apply (see {@link VerifyCaseOptions.strict}). */
      readonly strict?: boolean | undefined
    } & Pick<VerifyCaseOptions, 'trust' | 'requireSigned'>
  ): Promise<ImportReport>
  /**
   * Verifies a case directory, bag directory or bag archive completely, then copies its case into
   * the client's store (CASE_EXISTS when the id is taken). Needs `store`.
   */
  importIntoStore(
    source: string,
    options?: {
      readonly onProgress?: ((done: number, total: number) => void) | undefined
      /** Refuse a case whose rules did not all apply (RULE_NOT_APPLIED as an error, as verify's `strict`). */
      readonly strict?: boolean | undefined
    } & Pick<VerifyCaseOptions, 'trust' | 'requireSigned'>
  ): Promise<{ readonly case_id: string; readonly generation: number }>
  /** Verifies a bag (archive or directory) and the case in it. */
  verify(
    target: string,
    options?: { readonly expectHead?: Receipt | string | undefined; readonly strict?: boolean | undefined } & Pick<
      VerifyCaseOptions,
      'trust' | 'requireSigned'
    >
  ): Promise<BagCheck>
}

/** The client. @category Client */
export interface Vba {
  /** The decoded profile, or null without one. */
  readonly profile: Profile | null
  readonly cases: CasesApi
  readonly research: ResearchApi
  readonly investigations: InvestigationsApi
  readonly transport: TransportApi
  readonly queue: QueueApi
  /** Releases every pool and handle (database connections, repositories). The process can then exit. */
  close(): Promise<void>
}
