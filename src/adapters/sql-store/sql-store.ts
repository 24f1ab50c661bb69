/**
 * The SQL store: cases in PostgreSQL or MariaDB/MySQL through knex (drivers `pg` and `mysql2`).
 *
 * Every event is kept as its exact canonical line bytes (plus seq, hash and command id as indexed
 * columns), so the checks of a log (chain and rules, {@link logChecker}), the projections and the
 * bag are the same code as for a directory, and a case gives the same bag from either store.
 *
 * An append is one transaction:
 *  1. `SELECT … FOR UPDATE` on the case's row: writers of one case queue here (READ COMMITTED, a
 *     lock wait bounded by `lockWaitMs`: CASE_LOCKED), writers of different cases do not meet;
 *  2. a lease, if the append runs under one, must still be held (LEASE_LOST);
 *  3. catch up with events other writers committed since the handle last looked (checked like open);
 *  4. a known command id returns its recorded outcome; a stale expected generation is
 *     GENERATION_CONFLICT; the command is planned and its rules checked like the directory store's;
 *  5. objects (content-addressed, shared by cases, inserted if absent), the event rows, the command
 *     row (primary key (case, command id): a duplicate cannot commit) and the case row (head and
 *     queue columns, `WHERE generation = expected`) are written, then COMMIT acknowledges.
 * A writer killed before COMMIT leaves nothing: the server rolls the transaction back.
 */
import { randomUUID } from 'node:crypto'
import { statSync } from 'node:fs'
import * as path from 'node:path'
import knexFactory, { type Knex } from 'knex'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../../domain/failure.js'
import { type CaseState } from '../../domain/case-state.js'
import { ruleFold } from '../../domain/rules.js'
import { canonicalJson, sha256Digest } from '../../events/canonical.js'
import { genesisHash, type RecordedEvent } from '../../events/chain.js'
import { CASE_FORMAT, CASE_FORMAT_VERSION, CaseDeclaration, EventEnvelope, type Head } from '../../events/envelope.js'
import { finding, isError, type Finding } from '../../events/findings.js'
import { collectRefs, objectPath, type FoundRef } from '../../events/refs.js'
import { fold, type AnyProjection } from '../../projections/projection.js'
import { queueRow, runnability, TIMED_REASONS, type QueueEntry, type QueueRow } from '../../projections/queue.js'
export type { QueueEntry }
import { VERSION } from '../../version.js'
import { systemEnv, type Env } from '../env.js'
import { fail, FailureError } from '../fs-util.js'
import { readRegular } from '../regular-file.js'
import { storeObjects } from './objects.js'
import { duplicateOf, nothingToAppend, planCommand, rebaseCommand, validateCommand, type AppendOutcome, type Command } from '../case-store/append.js'
import { corrupt, handleFromScan, type CaseHandle } from '../case-store/open.js'
import { decodeRecordFile, logChecker, scanCase, type CommandSpan, type ScanResult } from '../case-store/scan.js'
import type { ReplayResult } from '../case-store/replay.js'
import type { VerifyOptions, VerifyReport } from '../case-store/verify.js'
import type { CaseStore, Lease, StoreAppendOptions } from '../case-store/store.js'
import { verifyCase, verifyReportOf } from '../case-store/verify.js'
import { DECLARATION_FILE, HEAD_FILE, LOG_FILE } from '../case-store/layout.js'
import { viewOf, type CaseView } from '../bagit/case-bag.js'
import { MIGRATIONS_TABLE, MIGRATION_NAMES, migrationSource } from './migrations.js'
import { parseStoreUrl, type StoreConnection } from './url.js'

/** Rows read per query when a log is scanned. */
const PAGE_ROWS = 2000
/** Event rows per INSERT statement. */
const INSERT_ROWS = 500
/** Deadlocks and serialization failures are retried this often before CASE_LOCKED. */
const TRANSACTION_ATTEMPTS = 4

export interface SqlStoreOptions {
  /** Where `password_env` is looked up (default process.env). */
  readonly environment?: Readonly<Record<string, string | undefined>>
  /** Connections in the pool (default 10). */
  readonly poolSize?: number
  /** How long an append waits for another writer of the same case (default 5000 ms). */
  readonly lockWaitMs?: number
  /** How long to wait for a connection (default 10000 ms). */
  readonly connectTimeoutMs?: number
}

/** A SQL store: the {@link CaseStore} contract plus the queue, import, and closing the pool. */
export interface SqlStore extends CaseStore {
  readonly kind: 'sql'
  /** The store URL without its password. */
  readonly url: string
  readonly dialect: 'postgres' | 'mysql'
  /** Every case with its queue row, runnable ones first (oldest update first), then the rest. */
  readonly list: (options?: { readonly limit?: number }) => Promise<QueueEntry[]>
  /**
   * Leases one runnable case to `worker` for `leaseMs` (the database's clock), or null when none is
   * runnable. Cases held by a live lease are skipped; an expired lease (a crashed worker) is taken over.
   */
  readonly claim: (worker: string, leaseMs: number) => Promise<Lease | null>
  /**
   * Leases one named case, runnable or not (an operator's `vba investigate`), unless a live lease
   * of another worker holds it (CASE_LEASED).
   */
  readonly leaseCase: (caseId: string, worker: string, leaseMs: number) => Promise<Lease>
  /** Extends a lease that is still held (LEASE_LOST otherwise). */
  readonly renew: (lease: Lease, leaseMs: number) => Promise<Lease>
  /** Gives a case back (by lease, or by case id and worker name); false when it was not held. */
  readonly release: (lease: Lease | { readonly caseId: string; readonly worker: string }) => Promise<boolean>
  /** Copies a verified case package (a directory) in; CASE_EXISTS when the id is taken. */
  readonly importDirectory: (dir: string) => Promise<{ readonly case_id: string; readonly generation: number }>
  /** The raw knex instance (benchmarks and tests). */
  readonly knex: Knex
  readonly close: () => Promise<void>
}

const SILENT = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined }

interface DriverError {
  readonly name?: string
  readonly code?: string
  readonly errno?: number
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', 'PROTOCOL_CONNECTION_LOST', 'EPIPE', 'ER_CON_COUNT_ERROR', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300'])
const DEADLOCK = new Set(['40P01', '40001', 'ER_LOCK_DEADLOCK'])
const LOCK_TIMEOUT = new Set(['55P03', 'ER_LOCK_WAIT_TIMEOUT'])

/** A driver error as a coded failure; the message is written here (never a password). */
export const storeFailure = (e: unknown, display: string): Failure => {
  if (e instanceof FailureError) return e.failure
  const err = (e ?? {}) as DriverError
  const code = err.code
  if (err.name === 'KnexTimeoutError') return failure('STORE_UNAVAILABLE', `no connection to the store ${display} in time`, { store: display })
  if (code === '3D000' || code === 'ER_BAD_DB_ERROR') return failure('STORE_UNAVAILABLE', `the store's database does not exist (${display}): create it, then run vba store migrate`, { store: display, driver_code: code })
  if (code === '28P01' || code === '28000' || code === 'ER_ACCESS_DENIED_ERROR' || code === 'ER_DBACCESS_DENIED_ERROR') return failure('STORE_UNAVAILABLE', `the store refused the credentials (${display})`, { store: display, driver_code: code })
  if (code === '42P01' || code === 'ER_NO_SUCH_TABLE') return failure('STORE_SCHEMA_OUTDATED', `the store ${display} has no case tables: run vba store migrate --store URL`, { store: display })
  if (code !== undefined && LOCK_TIMEOUT.has(code)) return failure('CASE_LOCKED', 'another writer holds the case (lock wait timed out); retry', { driver_code: code })
  if (code !== undefined && DEADLOCK.has(code)) return failure('CASE_LOCKED', 'the store kept detecting deadlocks with other writers; retry', { driver_code: code })
  if (code === 'ER_NET_PACKET_TOO_LARGE') return failure('EVENT_TOO_LARGE', "a row is larger than the server's max_allowed_packet", { driver_code: code })
  if (code !== undefined && UNREACHABLE.has(code)) return failure('STORE_UNAVAILABLE', `the store ${display} is unavailable (${code})`, { store: display, driver_code: code })
  const message = e instanceof Error ? e.message.slice(0, 300) : String(e).slice(0, 300)
  return failure('INTERNAL_ERROR', `store ${display}: ${message}`, { store: display, ...(code === undefined ? {} : { driver_code: code }) })
}

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v))
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v))
const buf = (v: unknown): Buffer => (Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array))

interface CaseRow {
  readonly case_id: string
  readonly declaration: Buffer
  readonly generation: number
  readonly head_hash: string
  readonly log_bytes: number
}

const knexConfig = (c: StoreConnection, o: SqlStoreOptions): Knex.Config => {
  const lockWait = o.lockWaitMs ?? 5000
  const session = c.client === 'pg'
    ? [`SET lock_timeout = ${Math.max(1, Math.round(lockWait))}`, "SET TIME ZONE 'UTC'"]
    : [
        `SET SESSION innodb_lock_wait_timeout = ${Math.max(1, Math.ceil(lockWait / 1000))}`,
        'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
        "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'",
        "SET time_zone = '+00:00'"
      ]
  return {
    client: c.client,
    log: SILENT,
    connection: {
      host: c.host,
      port: c.port,
      user: c.user,
      ...(c.password === undefined ? {} : { password: c.password }),
      database: c.database,
      ...(c.client === 'mysql2' ? { supportBigNumbers: true, connectTimeout: o.connectTimeoutMs ?? 10_000 } : { connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000 })
    },
    pool: {
      min: 0,
      max: o.poolSize ?? 10,
      afterCreate: (conn: { query: (sql: string, cb: (e: unknown) => void) => void }, done: (e: unknown, c: unknown) => void) => {
        const next = (i: number): void => {
          if (i === session.length) {
            done(null, conn)
            return
          }
          conn.query(session[i] as string, (e) => (e ? done(e, conn) : next(i + 1)))
        }
        next(0)
      }
    },
    acquireConnectionTimeout: o.connectTimeoutMs ?? 10_000,
    migrations: { tableName: MIGRATIONS_TABLE, migrationSource }
  }
}

/** Brings the store's schema to the latest version; returns the migrations it applied. */
export const migrateStore = async (url: string, options: SqlStoreOptions = {}): Promise<{ readonly applied: readonly string[]; readonly latest: string }> => {
  const c = connectionOf(url, options)
  const k = knexFactory(knexConfig(c, options))
  try {
    const [, applied] = (await k.migrate.latest()) as [number, string[]]
    return { applied, latest: MIGRATION_NAMES[MIGRATION_NAMES.length - 1] as string }
  } catch (e) {
    throw new FailureError(storeFailure(e, c.display))
  } finally {
    await k.destroy()
  }
}

const connectionOf = (url: string, options: SqlStoreOptions): StoreConnection => {
  const c = parseStoreUrl(url, options.environment ?? process.env)
  if (E.isLeft(c)) throw new FailureError(c.left)
  return c.right
}

/**
 * Opens a SQL store (a pool; nothing is connected until the first use, which checks the schema:
 * STORE_SCHEMA_OUTDATED until `vba store migrate` has run). Close it when done.
 */
export const openSqlStore = async (url: string, options: SqlStoreOptions = {}): Promise<SqlStore> => {
  const c = connectionOf(url, options)
  const k = knexFactory(knexConfig(c, options))
  const display = c.display
  const dialect = c.client === 'pg' ? 'postgres' as const : 'mysql' as const
  const guard = async <A>(work: () => Promise<A>): Promise<A> => {
    try {
      return await work()
    } catch (e) {
      throw new FailureError(storeFailure(e, display))
    }
  }
  try {
    const [, pending] = (await k.migrate.list()) as [unknown[], unknown[]]
    if (pending.length > 0) throw new FailureError(failure('STORE_SCHEMA_OUTDATED', `the store ${display} is ${pending.length} migration(s) behind this version of vba: run vba store migrate --store URL`, { store: display, pending: pending.length }))
  } catch (e) {
    await k.destroy()
    throw new FailureError(storeFailure(e, display))
  }

  /** Runs `work` in a transaction, retried after a deadlock (nothing was committed). */
  const transaction = async <A>(work: (trx: Knex.Transaction) => Promise<A>): Promise<A> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await k.transaction(work)
      } catch (e) {
        const code = (e as DriverError | null)?.code
        if (code !== undefined && DEADLOCK.has(code) && attempt < TRANSACTION_ATTEMPTS) {
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt))
          continue
        }
        throw new FailureError(storeFailure(e, display))
      }
    }
  }

  const dbNowMs = async (q: Knex | Knex.Transaction): Promise<number> => {
    const sql = dialect === 'postgres' ? 'SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) AS now' : 'SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS UNSIGNED) AS now'
    const r = (await q.raw(sql)) as unknown
    const rows = dialect === 'postgres' ? (r as { rows: Array<{ now: unknown }> }).rows : (r as [Array<{ now: unknown }>])[0]
    return num(rows[0]?.now)
  }

  const caseRow = async (q: Knex | Knex.Transaction, caseId: string, lock: boolean): Promise<CaseRow & { lease_token: string | null; lease_expires_ms: number | null; lease_owner: string | null }> => {
    let query = q('vba_cases').select('case_id', 'declaration', 'generation', 'head_hash', 'log_bytes', 'lease_owner', 'lease_token', 'lease_expires_ms').where({ case_id: caseId })
    if (lock) query = query.forUpdate()
    const row = (await query.first()) as Record<string, unknown> | undefined
    if (row === undefined) throw new FailureError(failure('CASE_NOT_FOUND', `no case ${caseId} in the store ${display}`, { case_id: caseId }))
    return {
      case_id: String(row['case_id']),
      declaration: buf(row['declaration']),
      generation: num(row['generation']),
      head_hash: String(row['head_hash']),
      log_bytes: num(row['log_bytes']),
      lease_owner: (row['lease_owner'] as string | null) ?? null,
      lease_token: (row['lease_token'] as string | null) ?? null,
      lease_expires_ms: numOrNull(row['lease_expires_ms'])
    }
  }

  interface ScanRowsOptions {
    readonly onEvent?: (e: RecordedEvent) => void
    readonly onRef?: (ref: FoundRef, envelope: EventEnvelope) => void
    readonly canonical?: boolean
    readonly rules?: boolean
    readonly resume?: { readonly seq: number; readonly hash: string; readonly bytes: number; readonly commands: Map<string, CommandSpan>; readonly lastCommand: string | null; readonly state: CaseState }
    /** Stop at this generation (the head read in the same transaction). */
    readonly until?: number
  }

  /**
   * The checks of a stored log, like the directory scan: the declaration (canonical), every row's
   * line through the same {@link logChecker}, the rows' columns against their lines, and the case
   * row's head against the log's end.
   */
  const scanRows = async (q: Knex | Knex.Transaction, row: CaseRow, o: ScanRowsOptions = {}): Promise<ScanResult> => {
    const findings: Finding[] = []
    let omitted = 0
    const report = (f: Finding): void => {
      if (findings.length < 1000) findings.push(f)
      else omitted++
    }
    // A catch-up (resume) continues a log whose declaration the handle checked already.
    const decl = o.resume === undefined ? decodeRecordFile(row.declaration.toString('utf8'), (u) => CaseDeclaration.decode(u)) : null
    if (decl !== null && E.isLeft(decl)) report(finding('CASE_DECLARATION_INVALID', `the stored declaration is invalid: ${decl.left}`, { path: DECLARATION_FILE }))
    const declaration = decl !== null && E.isRight(decl) ? decl.right : null
    if (declaration !== null && declaration.case_id !== row.case_id) report(finding('CASE_DECLARATION_INVALID', `the stored declaration names case ${declaration.case_id}, the row ${row.case_id}`, { path: DECLARATION_FILE }))
    const genesis = declaration === null ? null : genesisHash(declaration)
    const start = o.resume ?? { seq: 0, hash: genesis !== null && E.isRight(genesis) ? genesis.right : null, bytes: 0 }
    const commands = o.resume?.commands ?? new Map<string, CommandSpan>()
    const rules = ruleFold(o.resume?.state)
    const checker = logChecker({
      ...(o.onEvent === undefined ? {} : { onEvent: o.onEvent }),
      ...(o.onRef === undefined ? {} : { onRef: o.onRef }),
      ...(o.canonical === undefined ? {} : { canonical: o.canonical }),
      start, commands, lastCommand: o.resume?.lastCommand ?? null, report, rules: o.rules === false ? null : rules
    })
    const until = o.until ?? row.generation
    let pos = start.bytes
    let after = start.seq
    let expected = start.seq + 1
    for (;;) {
      const rows = (await q('vba_events').select('seq', 'command_id', 'hash', 'line').where('case_id', row.case_id).andWhere('seq', '>', after).andWhere('seq', '<=', until).orderBy('seq').limit(PAGE_ROWS)) as Array<Record<string, unknown>>
      for (const r of rows) {
        const seq = num(r['seq'])
        const line = buf(r['line'])
        if (seq !== expected) report(finding('SEQ_GAP', `the stored log has no event ${expected} (next stored: ${seq})`, { path: LOG_FILE, seq: expected }))
        expected = seq + 1
        const end = pos + line.length + 1
        checker.line(line, null, pos, end)
        if (checker.seq() === seq && (checker.hash() !== r['hash'] || checker.lastCommand() !== r['command_id'])) {
          report(finding('HEAD_MISMATCH', `the row of event ${seq} does not match its line (hash or command id column)`, { path: LOG_FILE, seq }))
        }
        pos = end
        after = seq
      }
      if (rows.length < PAGE_ROWS) break
    }
    checker.end()
    if (checker.seq() !== row.generation || checker.hash() !== row.head_hash || checker.bytes() !== row.log_bytes) {
      report(finding('HEAD_MISMATCH', `the case row acknowledges seq ${row.generation}, the stored log ends at seq ${checker.seq()}${checker.hash() === row.head_hash ? '' : ' with another hash'}`, { path: HEAD_FILE, data: { head_seq: row.generation, log_seq: checker.seq() } }))
    }
    return {
      declaration,
      head: { seq: row.generation, hash: row.head_hash, bytes: row.log_bytes },
      findings,
      omittedFindings: omitted,
      seq: checker.seq(),
      hash: checker.hash(),
      bytes: checker.bytes(),
      fileBytes: checker.bytes(),
      commands,
      lastCommand: checker.lastCommand(),
      eventIds: checker.eventIds(),
      state: rules.state(),
      obligations: rules.obligations()
    }
  }

  const objects = storeObjects(dialect)

  const queueColumns = (s: CaseState): Record<string, unknown> => {
    const r = queueRow(s)
    return {
      state: r.state,
      reason: r.reason,
      retry_not_before: r.retry_not_before,
      retry_not_before_ms: r.retry_not_before === null ? null : Date.parse(r.retry_not_before),
      revision: r.revision,
      budget_left: r.budget_left,
      pending_plan: r.pending_plan
    }
  }

  const insertEvents = async (trx: Knex.Transaction, caseId: string, lines: ReadonlyArray<{ seq: number; command_id: string; hash: string; line: Buffer }>): Promise<void> => {
    for (let i = 0; i < lines.length; i += INSERT_ROWS) {
      await trx('vba_events').insert(lines.slice(i, i + INSERT_ROWS).map((l) => ({ case_id: caseId, ...l })))
    }
  }

  const open = async (caseId: string): Promise<CaseHandle> => {
    const { row, scan } = await guard(async () => {
      const row = await caseRow(k, caseId, false)
      return { row, scan: await scanRows(k, row, { canonical: false }) }
    })
    const h = handleFromScan(row.case_id, scan, store)
    if ('_tag' in h) throw new FailureError(h)
    return h
  }

  const catchUp = async (trx: Knex.Transaction, handle: CaseHandle, row: CaseRow): Promise<void> => {
    const c = handle.cursor
    if (row.generation === c.seq) {
      if (row.head_hash !== c.hash) throw new FailureError(corrupt([finding('HEAD_MISMATCH', 'the case row changed without new events (case replaced or edited)', { path: HEAD_FILE })]))
      return
    }
    if (row.generation < c.seq) throw new FailureError(corrupt([finding('HEAD_MISMATCH', `the case went back from ${c.seq} to ${row.generation}`, { path: HEAD_FILE })]))
    const scan = await scanRows(trx, row, { canonical: false, resume: { seq: c.seq, hash: c.hash, bytes: c.bytes, commands: c.commands, lastCommand: c.lastCommand, state: c.state } })
    const errors = scan.findings.filter(isError)
    if (errors.length > 0 || scan.hash === null) throw new FailureError(corrupt(errors))
    c.seq = scan.seq
    c.hash = scan.hash
    c.bytes = scan.bytes
    c.lastCommand = scan.lastCommand
    c.state = scan.state
  }

  const recordedEvents = async (q: Knex | Knex.Transaction, caseId: string, span: CommandSpan): Promise<EventEnvelope[]> => {
    const rows = (await q('vba_events').select('line').where('case_id', caseId).andWhere('seq', '>=', span.firstSeq).andWhere('seq', '<=', span.lastSeq).orderBy('seq')) as Array<Record<string, unknown>>
    return rows.map((r) => {
      const decoded = EventEnvelope.decode(JSON.parse(buf(r['line']).toString('utf8')))
      if (E.isLeft(decoded)) return fail('CASE_CORRUPT', 'recorded event no longer decodes')
      return decoded.right
    })
  }

  const append = async (handle: CaseHandle, first: Command, options: StoreAppendOptions = {}): Promise<AppendOutcome> => {
    validateCommand(first)
    const env = options.env ?? systemEnv
    let after: { state: CaseState; seq: number; hash: string; bytes: number; span: CommandSpan } | null = null
    const outcome = await transaction(async (trx) => {
      // One statement locks the row and reads the head, the lease and the database's clock.
      const nowSql = dialect === 'postgres' ? 'CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)' : 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS UNSIGNED)'
      const locked = (await trx('vba_cases').select('case_id', 'generation', 'head_hash', 'log_bytes', 'lease_token', 'lease_expires_ms', trx.raw(`${nowSql} AS now_ms`)).where({ case_id: handle.ref }).forUpdate().first()) as Record<string, unknown> | undefined
      if (locked === undefined) return fail('CASE_NOT_FOUND', `no case ${handle.ref} in the store ${display}`, { case_id: handle.ref })
      const row: CaseRow = { case_id: handle.ref, declaration: Buffer.alloc(0), generation: num(locked['generation']), head_hash: String(locked['head_hash']), log_bytes: num(locked['log_bytes']) }
      if (options.lease !== undefined) {
        const expires = numOrNull(locked['lease_expires_ms'])
        if (locked['lease_token'] !== options.lease.token || expires === null || expires <= num(locked['now_ms'])) {
          fail('LEASE_LOST', `the lease of ${options.lease.worker} on case ${handle.ref} was lost (expired or taken over); stop working on the case`, { case_id: handle.ref, worker: options.lease.worker })
        }
      }
      await catchUp(trx, handle, row)
      const recorded = handle.cursor.commands.get(first.commandId)
      if (recorded !== undefined) return duplicateOf(handle, first, await recordedEvents(trx, handle.ref, recorded))
      const rebased = rebaseCommand(handle, first, options)
      if (rebased === null) return nothingToAppend(handle, first.commandId)
      const cmd = rebased
      const plan = await planCommand(handle, cmd, env, {
        sizeOf: async (digest) => {
          const r = (await trx('vba_objects').select('size').where({ digest }).first()) as Record<string, unknown> | undefined
          return r === undefined ? null : num(r['size'])
        },
        read: async (ref) => {
          try {
            return await objects.read(trx, ref)
          } catch {
            return undefined
          }
        }
      })
      await objects.insert(trx, plan.provided.values())
      const lines = plan.sealed.map((x) => ({ seq: x.envelope.seq, command_id: x.envelope.command_id, hash: x.envelope.hash, line: Buffer.from(x.line, 'utf8') }))
      const state = plan.rules.state()
      // The queue's clock is the events' own time (the env clock is not consumed twice).
      const lastAt = plan.sealed[plan.sealed.length - 1]?.envelope.at ?? new Date(0).toISOString()
      const head = {
        generation: plan.newHead.seq,
        head_hash: plan.newHead.hash,
        log_bytes: plan.newHead.bytes,
        last_event_at: lastAt,
        updated_ms: Date.parse(lastAt),
        ...queueColumns(state)
      }
      const commandRow = { case_id: handle.ref, command_id: cmd.commandId, first_seq: handle.cursor.seq + 1, last_seq: plan.newHead.seq }
      let updated: number
      if (dialect === 'postgres' && lines.length <= INSERT_ROWS) {
        // PostgreSQL: events, command and head in one statement (data-modifying CTEs): one round
        // trip while the case row is locked, instead of three.
        const ev = trx('vba_events').insert(lines.map((l) => ({ case_id: handle.ref, ...l }))).toSQL()
        const cm = trx('vba_commands').insert(commandRow).toSQL()
        const up = trx('vba_cases').where({ case_id: handle.ref, generation: handle.cursor.seq }).update(head).toSQL()
        const r = (await trx.raw(`WITH ev AS (${ev.sql}), cm AS (${cm.sql}) ${up.sql}`, [...ev.bindings, ...cm.bindings, ...up.bindings] as Knex.RawBinding[])) as { rowCount: number }
        updated = r.rowCount
      } else {
        await insertEvents(trx, handle.ref, lines)
        await trx('vba_commands').insert(commandRow)
        updated = await trx('vba_cases').where({ case_id: handle.ref, generation: handle.cursor.seq }).update(head)
      }
      if (updated !== 1) fail('GENERATION_CONFLICT', 'the case moved while the command was written; retry', { expected: cmd.expectedGeneration })
      after = { state, seq: plan.newHead.seq, hash: plan.newHead.hash, bytes: plan.newHead.bytes, span: { firstSeq: handle.cursor.seq + 1, lastSeq: plan.newHead.seq, start: handle.cursor.bytes, end: plan.newHead.bytes } }
      return { status: 'appended' as const, commandId: cmd.commandId, events: plan.sealed.map((s) => s.envelope), generation: plan.newHead.seq, receipt: { seq: plan.newHead.seq, hash: plan.newHead.hash }, repairs: [] }
    })
    // Acknowledged (committed): only now does the handle move on.
    const a = after as { state: CaseState; seq: number; hash: string; bytes: number; span: CommandSpan } | null
    if (a !== null && outcome.status === 'appended') {
      handle.cursor.commands.set(first.commandId, a.span)
      handle.cursor.lastCommand = first.commandId
      handle.cursor.seq = a.seq
      handle.cursor.hash = a.hash
      handle.cursor.bytes = a.bytes
      handle.cursor.state = a.state
    }
    return outcome
  }

  const verify = async (caseId: string, options: VerifyOptions = {}): Promise<VerifyReport> => guard(async () => {
    const row = await caseRow(k, caseId, false)
    const referenced = new Map<string, number>()
    const extra: Finding[] = []
    const expect = options.expectHead
    let atReceipt: string | null = null
    const scan = await scanRows(k, row, {
      ...(options.rules === undefined ? {} : { rules: options.rules }),
      onEvent: (e) => {
        if (expect !== undefined && e.seq === expect.seq) atReceipt = e.hash
        options.onEvent?.(e)
      },
      onRef: (ref, env) => {
        const known = referenced.get(ref.digest)
        if (known === undefined) referenced.set(ref.digest, ref.size)
        else if (known !== ref.size) extra.push(finding('OBJECT_SIZE_MISMATCH', `${ref.digest} is referenced with sizes ${known} and ${ref.size}`, { seq: env.seq, data: { digest: ref.digest } }))
      }
    })
    options.onProgress?.('log', row.log_bytes, row.log_bytes)
    // Every referenced object is read back and hashed; the obligations' objects are kept for the rules.
    const wanted = new Set<string>()
    for (const ob of scan.obligations) for (const ref of ob.kind === 'capture' ? [ob.ref] : [ob.ref, ...ob.captures, ...ob.known]) wanted.add(ref.digest)
    const kept = new Map<string, Buffer>()
    const digests = [...referenced.keys()].sort()
    let objectBytesTotal = 0
    let present = 0
    for (let i = 0; i < digests.length; i += 100) {
      const batch = digests.slice(i, i + 100)
      const found = await objects.readMany(k, batch)
      for (const digest of batch) {
        const rel = objectPath(digest)
        const bytes = found.get(digest)
        if (bytes === undefined) {
          extra.push(finding('OBJECT_MISSING', `referenced object ${digest} is missing`, { path: rel, data: { digest } }))
          continue
        }
        present++
        objectBytesTotal += bytes.length
        if (sha256Digest(bytes) !== digest) extra.push(finding('OBJECT_DIGEST_MISMATCH', `${rel} does not hash to its name`, { path: rel, data: { digest } }))
        else if (bytes.length !== referenced.get(digest)) extra.push(finding('OBJECT_SIZE_MISMATCH', `${rel} has ${bytes.length} bytes, referenced with ${String(referenced.get(digest))}`, { path: rel, data: { digest } }))
        else if (wanted.has(digest)) kept.set(digest, bytes)
      }
      options.onProgress?.('objects', Math.min(i + 100, digests.length), digests.length)
    }
    return verifyReportOf(scan, (ref) => {
      const b = kept.get(ref.digest)
      return b !== undefined && b.length === ref.size ? b : undefined
    }, extra, expect, atReceipt, { objects: present, objectBytes: objectBytesTotal, logBytes: scan.bytes })
  })

  const replay = async (caseId: string, projections: readonly AnyProjection[]): Promise<ReplayResult> => guard(async () => {
    const row = await caseRow(k, caseId, false)
    const f = fold(projections)
    const scan = await scanRows(k, row, { onEvent: f.feed, canonical: false })
    if (scan.findings.some(isError) || scan.declaration === null || scan.hash === null) throw new FailureError(corrupt(scan.findings, scan.omittedFindings))
    return { case_id: scan.declaration.case_id, generation: scan.seq, head_hash: scan.hash, views: f.views(), notices: scan.findings }
  })

  const view = async (caseId: string): Promise<CaseView> => guard(async () => {
    // One transaction, so the head, the log and the objects are of one generation.
    return k.transaction(async (trx) => {
      const row = await caseRow(trx, caseId, false)
      const lines: Buffer[] = []
      let after = 0
      for (;;) {
        const rows = (await trx('vba_events').select('seq', 'line').where('case_id', caseId).andWhere('seq', '>', after).andWhere('seq', '<=', row.generation).orderBy('seq').limit(PAGE_ROWS)) as Array<Record<string, unknown>>
        for (const r of rows) {
          lines.push(buf(r['line']), Buffer.from('\n'))
          after = num(r['seq'])
        }
        if (rows.length < PAGE_ROWS) break
      }
      const head = canonicalJson({ seq: row.generation, hash: row.head_hash, bytes: row.log_bytes } satisfies Head)
      if (E.isLeft(head)) return fail('INTERNAL_ERROR', 'HEAD is not canonicalisable')
      // Objects are read in chunks while the bag is written: one chunk in memory, not the object.
      return viewOf(Buffer.from(head.right + '\n'), row.declaration, Buffer.concat(lines), (_rel, digest, size) => ({ stream: () => objects.chunks(k, digest, size) }))
    })
  })

  const create = async (caseId: string, o: { readonly title?: string; readonly env?: Env }): Promise<CaseDeclaration> => {
    const env = o.env ?? systemEnv
    const decoded = CaseDeclaration.decode({
      format: CASE_FORMAT,
      format_version: CASE_FORMAT_VERSION,
      case_id: caseId,
      created_at: env.now().toISOString(),
      created_by: `vba ${VERSION}`,
      ...(o.title === undefined ? {} : { title: o.title })
    })
    if (E.isLeft(decoded)) return fail('INVALID_ARGUMENT', 'case id must be 1-128 characters of letters, digits, . _ : - (starting with a letter or digit)', { case_id: caseId })
    const text = canonicalJson(decoded.right)
    const genesis = genesisHash(decoded.right)
    if (E.isLeft(text) || E.isLeft(genesis)) return fail('INTERNAL_ERROR', 'declaration is not canonicalisable')
    await insertCase(async (trx) => {
      await trx('vba_cases').insert({ case_id: caseId, declaration: Buffer.from(text.right + '\n'), created_at: decoded.right.created_at, generation: 0, head_hash: genesis.right, log_bytes: 0, updated_ms: Date.parse(decoded.right.created_at), ...queueColumns(ruleFold().state()) })
    }, caseId)
    return decoded.right
  }

  const insertCase = async (work: (trx: Knex.Transaction) => Promise<void>, caseId: string): Promise<void> => {
    try {
      await transaction(work)
    } catch (e) {
      const code = (e as FailureError).failure?.data?.['driver_code']
      if (code === '23505' || code === 'ER_DUP_ENTRY') fail('CASE_EXISTS', `the store ${display} already holds case ${caseId}`, { case_id: caseId })
      throw e
    }
  }

  const importDirectory = async (dir: string): Promise<{ case_id: string; generation: number }> => {
    const root = path.resolve(dir)
    const report = await verifyCase(root)()
    if (E.isLeft(report)) throw new FailureError(report.left)
    if (!report.right.valid) {
      const errors = report.right.findings.filter(isError)
      fail('CASE_CORRUPT', `the case does not verify: ${errors.length} finding(s), first: ${errors[0]?.code ?? 'unknown'}; nothing was imported`, { findings: errors.slice(0, 20) })
    }
    const declBytes = await readRegular(path.join(root, DECLARATION_FILE), { maxBytes: 64 << 10, shown: DECLARATION_FILE })
    const log = await readRegular(path.join(root, LOG_FILE), { shown: LOG_FILE })
    const head = report.right.head
    if (head === null) return fail('INTERNAL_ERROR', 'a valid case without a head')
    const decl = CaseDeclaration.decode(JSON.parse(declBytes.toString('utf8')))
    if (E.isLeft(decl)) return fail('INTERNAL_ERROR', 'a valid case with an invalid declaration')
    const caseId = decl.right.case_id
    // The state, commands and rows, from the same bytes (the log up to HEAD).
    const limit = log.subarray(0, report.right.log_bytes)
    const rows: Array<{ seq: number; command_id: string; hash: string; line: Buffer }> = []
    const commands = new Map<string, { first_seq: number; last_seq: number }>()
    let s = 0
    let lastAt: string | null = null
    while (s < limit.length) {
      const nl = limit.indexOf(10, s)
      const line = limit.subarray(s, nl)
      const env = EventEnvelope.decode(JSON.parse(line.toString('utf8')))
      if (E.isLeft(env)) return fail('INTERNAL_ERROR', 'a valid case with an undecodable event')
      rows.push({ seq: env.right.seq, command_id: env.right.command_id, hash: env.right.hash, line: Buffer.from(line) })
      const c = commands.get(env.right.command_id)
      if (c === undefined) commands.set(env.right.command_id, { first_seq: env.right.seq, last_seq: env.right.seq })
      else c.last_seq = env.right.seq
      lastAt = env.right.at
      s = nl + 1
    }
    const scanState = (await scanCase(root, { canonical: false })).state
    // Each object is read when it is inserted (one in memory at a time), as a regular file only.
    const files = referencedObjects(limit).map((digest) => {
      const file = path.join(root, objectPath(digest))
      return { digest, size: statSync(file).size, read: () => readRegular(file, { shown: objectPath(digest) }) }
    })
    await insertCase(async (trx) => {
      await trx('vba_cases').insert({ case_id: caseId, declaration: declBytes, created_at: decl.right.created_at, generation: head.seq, head_hash: head.hash, log_bytes: limit.length, last_event_at: lastAt, updated_ms: Date.parse(lastAt ?? decl.right.created_at), ...queueColumns(scanState) })
      await objects.insert(trx, files)
      await insertEvents(trx, caseId, rows)
      const cmdRows = [...commands.entries()].map(([command_id, c]) => ({ case_id: caseId, command_id, ...c }))
      for (let i = 0; i < cmdRows.length; i += INSERT_ROWS) await trx('vba_commands').insert(cmdRows.slice(i, i + INSERT_ROWS))
    }, caseId)
    return { case_id: caseId, generation: head.seq }
  }

  const list = async (o: { readonly limit?: number } = {}): Promise<QueueEntry[]> => guard(async () => {
    const now = await dbNowMs(k)
    const rows = (await k('vba_cases').select('case_id', 'declaration', 'generation', 'state', 'reason', 'retry_not_before', 'revision', 'budget_left', 'pending_plan', 'lease_owner', 'lease_expires_ms', 'updated_ms', 'last_event_at', 'created_at').orderBy([{ column: 'updated_ms' }, { column: 'case_id' }]).limit(o.limit ?? 10_000)) as Array<Record<string, unknown>>
    const entries = rows.map((r): QueueEntry => {
      const q: QueueRow = {
        state: r['state'] as QueueRow['state'],
        reason: (r['reason'] as string | null) ?? null,
        retry_not_before: (r['retry_not_before'] as string | null) ?? null,
        revision: num(r['revision']),
        budget_left: numOrNull(r['budget_left']),
        pending_plan: (r['pending_plan'] as string | null) ?? null
      }
      const run = runnability(q, now)
      const expires = numOrNull(r['lease_expires_ms'])
      const leased = expires !== null && expires > now && r['lease_owner'] !== null
      let title: string | null = null
      try {
        title = (JSON.parse(buf(r['declaration']).toString('utf8')) as { title?: string }).title ?? null
      } catch {
        title = null
      }
      return {
        case_id: String(r['case_id']),
        title,
        generation: num(r['generation']),
        ...q,
        runnable: run.runnable && !leased,
        why: leased ? `leased by ${String(r['lease_owner'])}` : run.why,
        lease: leased ? { worker: String(r['lease_owner']), expires_at: new Date(expires).toISOString() } : null,
        last_activity: String(r['last_event_at'] ?? r['created_at'])
      }
    })
    return [...entries.filter((e) => e.runnable), ...entries.filter((e) => !e.runnable)]
  })

  const claim = async (worker: string, leaseMs: number): Promise<Lease | null> => {
    checkWorker(worker, leaseMs)
    return transaction(async (trx) => {
      const now = await dbNowMs(trx)
      const timed = TIMED_REASONS.map(() => '?').join(', ')
      const sql = `SELECT case_id FROM vba_cases
        WHERE revision > 0
          AND (lease_expires_ms IS NULL OR lease_expires_ms <= ?)
          AND (state IN ('NOT_STARTED', 'INTERPRETING', 'INVESTIGATING')
               OR (state = 'BLOCKED' AND reason IN (${timed}) AND (retry_not_before_ms IS NULL OR retry_not_before_ms <= ?)))
        ORDER BY updated_ms, case_id
        LIMIT 1
        FOR UPDATE SKIP LOCKED`
      const r = (await trx.raw(sql, [now, ...TIMED_REASONS, now])) as unknown
      const rows = dialect === 'postgres' ? (r as { rows: Array<{ case_id: string }> }).rows : (r as [Array<{ case_id: string }>])[0]
      const caseId = rows[0]?.case_id
      if (caseId === undefined) return null
      const lease: Lease = { caseId, worker, token: randomUUID(), expiresAt: now + leaseMs }
      await trx('vba_cases').where({ case_id: caseId }).update({ lease_owner: worker, lease_token: lease.token, lease_expires_ms: lease.expiresAt })
      return lease
    })
  }

  const leaseCase = async (caseId: string, worker: string, leaseMs: number): Promise<Lease> => {
    checkWorker(worker, leaseMs)
    return transaction(async (trx) => {
      const row = await caseRow(trx, caseId, true)
      const now = await dbNowMs(trx)
      if (row.lease_expires_ms !== null && row.lease_expires_ms > now && row.lease_owner !== worker) {
        fail('CASE_LEASED', `case ${caseId} is being worked on by ${String(row.lease_owner)} until ${new Date(row.lease_expires_ms).toISOString()}`, { case_id: caseId, worker: row.lease_owner, expires_at: new Date(row.lease_expires_ms).toISOString() })
      }
      const lease: Lease = { caseId, worker, token: randomUUID(), expiresAt: now + leaseMs }
      await trx('vba_cases').where({ case_id: caseId }).update({ lease_owner: worker, lease_token: lease.token, lease_expires_ms: lease.expiresAt })
      return lease
    })
  }

  const renew = async (lease: Lease, leaseMs: number): Promise<Lease> => {
    checkWorker(lease.worker, leaseMs)
    return transaction(async (trx) => {
      const now = await dbNowMs(trx)
      const n = await trx('vba_cases').where({ case_id: lease.caseId, lease_token: lease.token }).andWhere('lease_expires_ms', '>', now).update({ lease_expires_ms: now + leaseMs })
      if (n !== 1) fail('LEASE_LOST', `the lease of ${lease.worker} on case ${lease.caseId} was lost (expired or taken over)`, { case_id: lease.caseId, worker: lease.worker })
      return { ...lease, expiresAt: now + leaseMs }
    })
  }

  const release = async (l: Lease | { readonly caseId: string; readonly worker: string }): Promise<boolean> => guard(async () => {
    const where = 'token' in l ? { case_id: l.caseId, lease_token: l.token } : { case_id: l.caseId, lease_owner: l.worker }
    const n = await k('vba_cases').where(where).update({ lease_owner: null, lease_token: null, lease_expires_ms: null })
    return n === 1
  })

  const store: SqlStore = {
    kind: 'sql',
    url: display,
    dialect,
    knex: k,
    describe: (ref) => `${display} case ${ref}`,
    create: (ref, o) => create(o.caseId ?? ref, o),
    open,
    append: (handle, cmd, options) => append(handle, cmd, options),
    recordedOutcome: async (handle, commandId) => {
      const span = handle.cursor.commands.get(commandId)
      if (span === undefined) return null
      const events = await guard(() => recordedEvents(k, handle.ref, span))
      const last = events[events.length - 1]
      return { status: 'duplicate', commandId, events, generation: handle.cursor.seq, receipt: last === undefined ? { seq: handle.cursor.seq, hash: handle.cursor.hash } : { seq: last.seq, hash: last.hash }, repairs: [] }
    },
    readObject: (_ref, object) => guard(() => objects.read(k, object)),
    verify,
    replay,
    view,
    list,
    claim,
    leaseCase,
    renew,
    release,
    importDirectory,
    close: () => k.destroy()
  }
  return store
}

const checkWorker = (worker: string, leaseMs: number): void => {
  if (!/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/.test(worker)) fail('INVALID_ARGUMENT', 'a worker name is 1-128 characters of letters, digits, . _ : @ - (starting with a letter or digit)')
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1000 || leaseMs > 24 * 3_600_000) fail('INVALID_ARGUMENT', 'a lease lasts between 1000 ms and 24 hours')
}


/** The digests a log references (in order of first reference). */
const referencedObjects = (log: Buffer): string[] => {
  const seen = new Set<string>()
  for (const line of log.toString('utf8').split('\n')) {
    if (line === '') continue
    for (const r of collectRefs((JSON.parse(line) as { data?: unknown }).data).refs) seen.add(r.digest)
  }
  return [...seen]
}
