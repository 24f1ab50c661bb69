/**
 * bench/db-rows: database.rows of 1,000 rows through ProjectResearch against the same SQL through
 * raw mysql2, in the same run, against a private MariaDB started here. Target (issue 36): within
 * 1.4x. Besides wall time it prints the process's CPU time per query (process.cpuUsage around each
 * call; the server runs in another process), which a loaded machine disturbs less.
 *
 *   node dist/bench/db-rows.js [--runs N]
 */
import * as path from 'node:path'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import mysql from 'mysql2/promise'
import { startMariaDb } from '../scripts/lib/mariadb-instance.js'
import { loadWorld, READER_USER } from '../scripts/lib/world-db.js'
import { loadProfile } from '../src/fp.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { machine, median, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, { runs: { type: 'string', default: '200' } })
const RUNS = Number(values.runs)
const COLUMNS = [
  'entry',
  'name',
  'subname',
  'minlevel',
  'maxlevel',
  'faction',
  'npcflag',
  'speed_walk',
  'DamageModifier',
  'AIName',
  'ScriptName',
  'VerifiedBuild'
]

const dir = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-db-'))
const server = await startMariaDb({ dir: path.join(dir, 'server') })
try {
  const password = 'bench-reader-pw'
  loadWorld(server.sql, password)
  const profileFile = path.join(dir, 'project.toml')
  writeFileSync(
    profileFile,
    `[database]\nclient = "mysql2"\nhost = "127.0.0.1"\nport = ${server.port}\nuser = "${READER_USER}"\npassword_env = "VBA_BENCH_PW"\ndatabases = ["world"]\nsnapshot_id = "bench"\n[database.allowed_tables]\nworld = ["creature_template"]\n[limits]\nmax_rows = 1000\nmax_result_bytes = 4194304\n`
  )
  process.env['VBA_BENCH_PW'] = password
  const profile = await loadProfile(profileFile)()
  if (profile._tag === 'Left') throw new Error(profile.left.message)
  const research = createProjectResearch(profile.right)
  const query = {
    kind: 'database.rows',
    table: 'creature_template',
    columns: COLUMNS,
    filters: [{ column: 'entry', operator: 'ge', value: 100000 }],
    offset: 0,
    limit: 1000
  }

  const raw = await mysql.createConnection({
    host: '127.0.0.1',
    port: server.port,
    user: READER_USER,
    password,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true
  })
  const sql = `select ${COLUMNS.map((c) => `\`${c}\``).join(', ')} from \`world\`.\`creature_template\` where \`entry\` >= ? order by \`entry\` asc limit ?`

  const cpu = { library: 0, raw: 0 }
  const timed = async (side: keyof typeof cpu, run: () => Promise<void>): Promise<number> => {
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    await run()
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    const c = process.cpuUsage(c0)
    cpu[side] += (c.user + c.system) / 1000
    return ms
  }
  const viaLibrary = (): Promise<number> =>
    timed('library', async () => {
      const r = await research.query(query)()
      if (r._tag === 'Left' || (r.right.result['rows'] as unknown[]).length !== 1000)
        throw new Error('library query failed')
    })
  const viaRaw = (): Promise<number> =>
    timed('raw', async () => {
      const [rows] = await raw.query(sql, [100000, 1001])
      if ((rows as unknown[]).length !== 1001) throw new Error('raw query failed')
    })
  for (let i = 0; i < 20; i++) {
    await viaLibrary()
    await viaRaw()
  }
  cpu.library = 0
  cpu.raw = 0
  const lib: number[] = []
  const ref: number[] = []
  for (let i = 0; i < RUNS; i++) {
    lib.push(await viaLibrary())
    ref.push(await viaRaw())
  }
  const ml = median(lib)
  const mr = median(ref)
  process.stdout.write(
    `bench/db-rows  ${new Date().toISOString().slice(0, 10)}  ${machine()}  MariaDB ${server.sql('SELECT VERSION()').trim()}\n`
  )
  process.stdout.write(
    `database.rows 1000 rows x ${COLUMNS.length} columns: library ${ml.toFixed(2)} ms vs raw mysql2 ${mr.toFixed(2)} ms (same SQL, same run, median of ${RUNS})  ratio ${(ml / mr).toFixed(2)}x (target <= 1.4x)\n`
  )
  process.stdout.write(
    `CPU per query (this process): library ${(cpu.library / RUNS).toFixed(2)} ms vs raw mysql2 ${(cpu.raw / RUNS).toFixed(2)} ms  ratio ${(cpu.library / cpu.raw).toFixed(2)}x\n`
  )
  await raw.end()
  await research.close()
} finally {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
