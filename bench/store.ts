/**
 * bench/store: commands appended per second by 1, 4 and 16 concurrent writers, to separate cases
 * and to one case, through the SQL store (the machine's PostgreSQL; with --mariadb also a private
 * MariaDB) and the directory store; the reference is bare INSERT transactions of the same rows
 * (event row, command row, case row update) through the same driver in the same run. Target: the
 * SQL store reaches at least half the reference's throughput. Then claims per second for 4 workers
 * over 10,000 queued cases.
 *
 * With --signing only: what signing costs an append (a CommandSigned event with an Ed25519 SSHSIG
 * ending every command), 1 writer to separate cases, on PostgreSQL and the directory store,
 * unsigned and signed rounds alternating; target: signed within 5% of unsigned.
 *
 * --writers 4 --one-case runs only that configuration (reference and store alternating, --rounds
 * times, medians, with the store's client CPU per command), without the claims and the directory
 * store; with --signing, --rounds pairs. --only-mariadb: MariaDB without PostgreSQL.
 *
 *   node dist/bench/store.js [--commands N] [--cases N] [--mariadb | --only-mariadb] [--signing]
 *                            [--writers N --one-case --rounds R]
 */
import * as path from 'node:path'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import * as os from 'node:os'
import pg from 'pg'
import type { Knex } from 'knex'
import { migrateStore, openSqlStore, type SqlStore } from '../src/adapters/sql-store/sql-store.js'
import { directoryStore } from '../src/adapters/case-store/directory-store.js'
import type { CaseStore } from '../src/adapters/case-store/store.js'
import type { CaseHandle } from '../src/adapters/case-store/open.js'
import type { RawCommand } from '../src/adapters/case-store/append.js'
import { FailureError } from '../src/failures/error.js'
import { canonicalJson, sha256Digest } from '../src/events/canonical.js'
import { startMariaDb } from '../scripts/lib/mariadb-instance.js'
import { machine, benchArgs } from './lib.js'
import { writeNewKey } from '../src/adapters/ssh-keys.js'
import { useProcessSigner } from '../src/adapters/env.js'

const values = benchArgs(import.meta.url, {
  commands: { type: 'string', default: '1600' },
  cases: { type: 'string', default: '10000' },
  mariadb: { type: 'boolean', default: false },
  'only-mariadb': { type: 'boolean', default: false },
  signing: { type: 'boolean', default: false },
  writers: { type: 'string' },
  'one-case': { type: 'boolean', default: false },
  rounds: { type: 'string', default: '3' }
})
const COMMANDS = Number(values.commands)
const QUEUED = Number(values.cases)
const WRITERS = values.writers === undefined ? [1, 4, 16] : [Number(values.writers)]
const ONLY = values.writers !== undefined
const ROUNDS = Number(values.rounds)
const ADMIN = process.env['VBA_TEST_POSTGRES'] ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const admin = async (sql: string): Promise<void> => {
  const c = new pg.Client({ connectionString: ADMIN })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

const note = (i: number): { type: string; actor: 'operator'; data: unknown } => ({
  type: 'NoteRecorded',
  actor: 'operator',
  data: { text: `bench note ${i}: the creature despawns when netted`, format: 'plain' }
})

/**
 * Appends `count` one-event commands through `handle` as typed commands do: decided on the
 * handle's state, and decided again under the lock when another writer moved the case on.
 */
const appendMany = async (store: CaseStore, handle: CaseHandle, prefix: string, count: number): Promise<void> => {
  for (let i = 0; i < count; i++) {
    const cmd = (h: CaseHandle): RawCommand => ({
      commandId: `${prefix}-${i}`,
      expectedGeneration: h.cursor.seq,
      events: [note(i)]
    })
    for (;;) {
      try {
        await store.append(handle, cmd(handle), { waitMs: 60_000, rebase: cmd })
        break
      } catch (e) {
        const code = e instanceof FailureError ? e.failure.code : ''
        if (code !== 'GENERATION_CONFLICT' && code !== 'CASE_LOCKED') throw e
      }
    }
  }
}

/** Commands per second of `writers` concurrent writers through a store, to separate cases or one. */
const storeRun = async (
  store: CaseStore,
  refOf: (name: string) => string,
  writers: number,
  oneCase: boolean,
  tag: string
): Promise<number> => {
  const per = Math.floor(COMMANDS / writers)
  const names = Array.from(
    { length: oneCase ? 1 : writers },
    (_, i) => `${tag}-${writers}-${oneCase ? 'one' : 'sep'}-${i}`
  )
  for (const n of names) await store.create(refOf(n), { caseId: n })
  const handles = await Promise.all(
    Array.from({ length: writers }, (_, w) => store.open(refOf(names[oneCase ? 0 : w] as string)))
  )
  const t0 = process.hrtime.bigint()
  await Promise.all(handles.map((h, w) => appendMany(store, h, `w${w}`, per)))
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  return (per * writers) / s
}

/** The reference: bare INSERT transactions of the same rows (event, command, case head) through the same knex driver. */
const referenceRun = async (k: Knex, writers: number, oneCase: boolean, tag: string): Promise<number> => {
  const per = Math.floor(COMMANDS / writers)
  const names = Array.from(
    { length: oneCase ? 1 : writers },
    (_, i) => `ref-${tag}-${writers}-${oneCase ? 'one' : 'sep'}-${i}`
  )
  for (const n of names) {
    await k('vba_cases').insert({
      case_id: n,
      declaration: Buffer.from('{}\n'),
      created_at: new Date().toISOString(),
      generation: 0,
      head_hash: `sha256:${'0'.repeat(64)}`,
      log_bytes: 0,
      updated_ms: Date.now()
    })
  }
  const next = new Map(names.map((n) => [n, 0]))
  const line = (n: string, seq: number, i: number): Buffer => {
    const text = canonicalJson({
      actor: 'operator',
      at: new Date().toISOString(),
      command_id: `c-${i}`,
      data: note(i).data,
      format: 'vba-event/1',
      hash: `sha256:${'0'.repeat(64)}`,
      id: `evt-${n}-${seq}`,
      prev: `sha256:${'0'.repeat(64)}`,
      seq,
      type: 'NoteRecorded',
      version: 2
    })
    return Buffer.from(text._tag === 'Right' ? text.right : '{}')
  }
  const refTransaction = refTransactionOf(k, next, line)
  const t0 = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const n = names[oneCase ? 0 : w] as string
      for (let i = 0; i < per; i++) {
        // A bare transaction loop retries what the server rolled back (MariaDB's deadlocks between
        // the events' foreign-key locks and the case row update).
        for (let attempt = 0; ; attempt++) {
          try {
            await refTransaction(i, w, n)
            break
          } catch (e) {
            if (
              attempt > 100_000 ||
              !['ER_LOCK_DEADLOCK', '40P01', '40001'].includes((e as { code?: string }).code ?? '')
            )
              throw e
          }
        }
      }
    })
  )
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  return (per * writers) / s
}

const refTransactionOf =
  (k: Knex, next: Map<string, number>, line: (n: string, seq: number, i: number) => Buffer) =>
  async (i: number, w: number, n: string): Promise<void> => {
    await k.transaction(async (trx) => {
      const seq = (next.get(n) ?? 0) + 1
      next.set(n, seq)
      const bytes = line(n, seq, i)
      await trx('vba_events').insert({
        case_id: n,
        seq,
        command_id: `w${w}-${i}`,
        hash: sha256Digest(bytes),
        line: bytes
      })
      await trx('vba_commands').insert({ case_id: n, command_id: `w${w}-${i}`, first_seq: seq, last_seq: seq })
      await trx('vba_cases')
        .where({ case_id: n })
        .update({
          generation: seq,
          head_hash: sha256Digest(bytes),
          log_bytes: seq * bytes.length,
          updated_ms: Date.now()
        })
    })
  }

/** Claims per second of 4 workers over `count` queued (prepared, not started) cases. */
const claimRun = async (store: SqlStore, count: number): Promise<{ perSecond: number; claimed: number }> => {
  const k = store.knex
  const rows = Array.from({ length: count }, (_, i) => ({
    case_id: `queued-${String(i).padStart(6, '0')}`,
    declaration: Buffer.from('{}\n'),
    created_at: new Date().toISOString(),
    generation: 3,
    head_hash: `sha256:${'0'.repeat(64)}`,
    log_bytes: 0,
    state: 'NOT_STARTED',
    revision: 1,
    claimable: 1,
    updated_ms: i
  }))
  for (let i = 0; i < rows.length; i += 500) await k('vba_cases').insert(rows.slice(i, i + 500))
  let claimed = 0
  const t0 = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: 4 }, async (_, w) => {
      for (;;) {
        const lease = await store.claim(`bench-${w}`, 600_000)
        if (lease === null) return
        claimed++
      }
    })
  )
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  return { perSecond: claimed / s, claimed }
}

interface Row {
  store: string
  writers: number
  target: string
  cps: number
  ref: number | null
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

/** One configuration (--writers, --one-case), reference and store alternating: the medians. */
const onlyRun = async (store: SqlStore, label: string): Promise<Row> => {
  const [writers, oneCase] = [WRITERS[0] as number, values['one-case'] === true]
  const refs: number[] = []
  const cpss: number[] = []
  // The store's client CPU per command (µs): the process's and its main thread's.
  const cpu = { process: [] as number[], main: [] as number[] }
  for (let r = 0; r < Number(values.rounds); r++) {
    refs.push(await referenceRun(store.knex, writers, oneCase, `${label}${r}`))
    const [main0, process0] = [mainThreadCpu(), process.cpuUsage()]
    cpss.push(await storeRun(store, (n) => n, writers, oneCase, `${label}${r}`))
    const [used, main1] = [process.cpuUsage(process0), mainThreadCpu()]
    const commands = Math.floor(COMMANDS / writers) * writers
    cpu.process.push((used.user + used.system) / commands)
    if (main0 !== null && main1 !== null) cpu.main.push((main1 - main0) / commands)
    console.log(
      `    round ${r}: ${cpss.at(-1)?.toFixed(0)} / ${refs.at(-1)?.toFixed(0)} commands/s; client CPU ${cpu.process.at(-1)?.toFixed(0)} µs per command, its main thread ${cpu.main.at(-1)?.toFixed(0) ?? '-'}`
    )
  }
  console.log(
    `    ${label} medians: client CPU ${median(cpu.process).toFixed(0)} µs per command${cpu.main.length === 0 ? '' : `, its main thread ${median(cpu.main).toFixed(0)}`} (load ${os.loadavg()[0]?.toFixed(1)})`
  )
  return {
    store: label,
    writers,
    target: oneCase ? 'one case' : 'separate cases',
    cps: median(cpss),
    ref: median(refs)
  }
}

const sqlBench = async (label: string, url: string, env: Record<string, string>): Promise<Row[]> => {
  await migrateStore(url, { environment: env })
  const store = await openSqlStore(url, { environment: env, poolSize: 20, lockWaitMs: 60_000 })
  const out: Row[] = []
  try {
    if (ONLY) return [await onlyRun(store, label)]
    for (const writers of WRITERS) {
      for (const oneCase of [false, true]) {
        const ref = await referenceRun(store.knex, writers, oneCase, label)
        const cps = await storeRun(store, (n) => n, writers, oneCase, label)
        out.push({ store: label, writers, target: oneCase ? 'one case' : 'separate cases', cps, ref })
      }
    }
    const c = await claimRun(store, QUEUED)
    console.log(`  ${label}: claims by 4 workers over ${c.claimed} queued cases: ${c.perSecond.toFixed(0)} claims/s`)
  } finally {
    await store.close()
  }
  return out
}

/**
 * CPU time (µs) of this process's main thread (Linux: /proc's schedstat, in ns): the client's
 * critical path, without V8's and libuv's background threads; null where /proc has no schedstat.
 */
const mainThreadCpu = (): number | null => {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000
  } catch {
    return null
  }
}

/** CPU time (µs) of the PostgreSQL backends serving database `db` (the server's share of an append), or null. */
const backendCpu = async (db: string): Promise<number | null> => {
  const c = new pg.Client({ connectionString: ADMIN })
  await c.connect()
  try {
    const r = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [db])
    let total = 0
    for (const { pid } of r.rows) total += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0])
    return total / 1000
  } catch {
    return null
  } finally {
    await c.end()
  }
}

/** Signed against unsigned appends, alternating rounds; the median commands/s of each. */
const signingBench = async (): Promise<void> => {
  const keyDir = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-key-'))
  const { signer } = await writeNewKey(path.join(keyDir, 'k'), 'bench')
  const compare = async (
    label: string,
    store: CaseStore,
    refOf: (n: string) => string,
    server?: () => Promise<number | null>
  ): Promise<void> => {
    const plain: number[] = []
    const signed: number[] = []
    // CPU per command (µs), less swayed by other processes than wall time: the client process's,
    // its main thread's (the append's critical path) and the PostgreSQL backends'.
    const cpu = { process: { u: [] as number[], s: [] as number[] }, main: { u: [] as number[], s: [] as number[] } }
    const serverCpu = { u: [] as number[], s: [] as number[] }
    // Short rounds, the order flipped every other pair: a loaded machine's swings fall on both sides.
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [false, true] : [true, false]
      for (const sign of order) {
        const side = sign ? 's' : 'u'
        useProcessSigner(sign ? async () => signer : undefined)
        const [server0, main0, process0] = [await server?.(), mainThreadCpu(), process.cpuUsage()]
        ;(sign ? signed : plain).push(await storeRun(store, refOf, 1, false, `${label}-${side}${round}`))
        const used = process.cpuUsage(process0)
        const [main1, server1] = [mainThreadCpu(), await server?.()]
        cpu.process[side].push((used.user + used.system) / COMMANDS)
        if (main0 !== null && main1 !== null) cpu.main[side].push((main1 - main0) / COMMANDS)
        if (server0 != null && server1 != null) serverCpu[side].push((server1 - server0) / COMMANDS)
      }
    }
    useProcessSigner(undefined)
    const [u, s] = [median(plain), median(signed)]
    const pairs = median(plain.map((p, i) => p / (signed[i] as number)))
    const cpuText = (what: string, x: { u: number[]; s: number[] }): string =>
      x.u.length === 0
        ? ''
        : `; ${what} ${median(x.u).toFixed(0)} / ${median(x.s).toFixed(0)} µs per command (${median(x.s) >= median(x.u) ? '+' : ''}${(median(x.s) - median(x.u)).toFixed(0)})`
    console.log(
      `  ${label.padEnd(11)} unsigned ${u.toFixed(0).padStart(6)} commands/s, signed ${s.toFixed(0).padStart(6)} commands/s: signing adds ${((u / s - 1) * 100).toFixed(1)}% per append (median of pairs ${((pairs - 1) * 100).toFixed(1)}%; target <= 5%)` +
        `${cpuText('client CPU', cpu.process)}${cpuText('its main thread', cpu.main)}${cpuText('server CPU', serverCpu)}`
    )
  }
  console.log(
    `bench/store --signing on ${machine()}; ${COMMANDS} one-event commands per round, ${ROUNDS} rounds each, alternating`
  )
  const dbName = `vba_bench_sign_${process.pid}`
  await admin(`CREATE DATABASE ${dbName}`)
  try {
    const u = new URL(ADMIN)
    u.pathname = `/${dbName}`
    await migrateStore(u.toString(), { environment: {} })
    const store = await openSqlStore(u.toString(), { environment: {}, poolSize: 4, lockWaitMs: 60_000 })
    try {
      await compare(
        'postgresql',
        store,
        (n) => n,
        () => backendCpu(dbName)
      )
    } finally {
      await store.close()
    }
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  }
  const root = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-dirs-'))
  try {
    await compare('directory', directoryStore, (n) => path.join(root, n))
  } finally {
    rmSync(root, { recursive: true, force: true })
    rmSync(keyDir, { recursive: true, force: true })
  }
}
if (values.signing === true) {
  await signingBench()
  process.exit(0)
}

console.log(`bench/store on ${machine()}; ${COMMANDS} one-event commands per configuration`)
const rows: Row[] = []
const print = (list: readonly Row[]): void => {
  for (const r of list) {
    console.log(
      `  ${r.store.padEnd(11)} ${String(r.writers).padStart(7)}  ${r.target.padEnd(15)} ${r.cps.toFixed(0).padStart(11)}  ${r.ref === null ? '-'.padStart(17) : r.ref.toFixed(0).padStart(17)}  ${r.ref === null ? '' : (r.cps / r.ref).toFixed(2)}`
    )
  }
}
console.log('  store       writers  target           commands/s  bare INSERT ref/s  ratio')
const dbName = `vba_bench_store_${process.pid}`
if (values['only-mariadb'] !== true) {
  await admin(`CREATE DATABASE ${dbName}`)
  try {
    const u = new URL(ADMIN)
    u.pathname = `/${dbName}`
    const pgRows = await sqlBench('postgresql', u.toString(), {})
    print(pgRows)
    rows.push(...pgRows)
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  }
}
if (values.mariadb === true || values['only-mariadb'] === true) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-store-'))
  const server = await startMariaDb({ dir: path.join(dir, 'server') })
  try {
    server.sql(
      "CREATE DATABASE bench; CREATE USER 'bench'@'%' IDENTIFIED BY 'bench-pw'; GRANT ALL ON bench.* TO 'bench'@'%';"
    )
    const mRows = await sqlBench(
      'mariadb',
      `mysql://bench@127.0.0.1:${server.port}/bench?password_env=VBA_BENCH_STORE_PW`,
      { VBA_BENCH_STORE_PW: 'bench-pw' }
    )
    print(mRows)
    rows.push(...mRows)
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
// The directory store (fsync on every append, like the databases' commits).
const root = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-dirs-'))
try {
  for (const writers of ONLY ? [] : WRITERS) {
    for (const oneCase of [false, true]) {
      const cps = await storeRun(directoryStore, (n) => path.join(root, n), writers, oneCase, 'dir')
      const row: Row = { store: 'directory', writers, target: oneCase ? 'one case' : 'separate cases', cps, ref: null }
      print([row])
      rows.push(row)
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}
const sql = rows.filter((r) => r.ref !== null)
const worst = Math.min(...sql.map((r) => r.cps / (r.ref as number)))
console.log(
  `  worst SQL store / reference ratio: ${worst.toFixed(2)} (target >= 0.5): ${worst >= 0.5 ? 'met' : 'NOT met'}`
)
