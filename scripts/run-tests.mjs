#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) in its own process, two at a time,
// and ends with one line "N passed, N failed". Each file is a uvu suite that also runs alone:
//   node dist/test/events/chain.test.js
// Usage: node scripts/run-tests.mjs [substring ...]   (filters files by path)
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { cpus } from 'node:os'
import net from 'node:net'

const root = new URL('..', import.meta.url).pathname
const testRoot = join(root, 'dist', 'test')
const filters = process.argv.slice(2)

const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.js') ? [p] : []
  })

let files
try {
  files = walk(testRoot).sort()
} catch {
  console.error('no compiled tests in dist/test: run `npm test` (it compiles first)')
  process.exit(2)
}
// Filters match the path below the repository (dist/test/...), so a checkout whose own path holds a
// substring (a worktree named after it) does not select every file.
if (filters.length > 0) files = files.filter((f) => filters.some((s) => relative(root, f).includes(s)))
// Slow integration files first so two workers finish together.
files.sort((a, b) => Number(b.includes('.int.')) - Number(a.includes('.int.')))

// The `vba` binary the tests run is the bundle users get (dist/vba, built from dist/src): rebuilt
// here so a run after a bare `tsc` never tests yesterday's bundle.
const bundled = spawnSync(process.execPath, [join(root, 'scripts', 'bundle.mjs'), '--quiet'], { stdio: 'inherit' })
if (bundled.status !== 0) {
  console.error('the CLI bundle could not be built (scripts/bundle.mjs): see above')
  console.log('0 passed, 1 failed')
  process.exit(1)
}

// Real parts: the suite needs git and MariaDB's server binaries; it says what to install and fails.
const { findBinaries, startMariaDb, INSTALL_HINT } = await import('../dist/scripts/lib/mariadb-instance.js')
const missing = []
if (spawnSync('git', ['--version']).status !== 0) missing.push('git (apt-get install git)')
if (findBinaries() === null) missing.push(INSTALL_HINT)
// The SQL store tests need the machine's PostgreSQL (a database of their own is created and dropped).
const pgUrl = new URL(process.env.VBA_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres')
const pgUp = await new Promise((resolve) => {
  const s = net.connect({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) })
  s.once('connect', () => {
    s.destroy()
    resolve(true)
  })
  s.once('error', () => resolve(false))
})
if (!pgUp)
  missing.push(
    `PostgreSQL on ${pgUrl.host} (trust auth for user postgres): apt-get install postgresql; pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start (or set VBA_TEST_POSTGRES to an admin URL)`
  )
if (missing.length > 0) {
  console.error(`cannot run the integration tests; missing:\n  - ${missing.join('\n  - ')}`)
  console.log('0 passed, 1 failed')
  process.exit(1)
}

// The suite leaves its host as it found it: the system temporary directory and the folders above the
// run's own folder keep their modes and owners (and the user's vba state folder stays as it was,
// missing or not), and the machine's MariaDB can still create temporary tables. Read now, read again after the last file; any difference fails the run.
const { mkdtempSync, rmSync, chmodSync } = await import('node:fs')
const { tmpdir } = await import('node:os')
const { readHostState, hostChanges, tmpWarnings, describeHostState } = await import('../dist/scripts/lib/host-state.js')
const systemTmp = tmpdir()
// And the user's own vba state (where `vba mcp --http` keeps ended sessions): tests give theirs a temporary one.
const { endedSessionsDir } = await import('../dist/src/mcp/ended-sessions.js')
const userState = join(endedSessionsDir(), '..')
const hostBefore = await readHostState([systemTmp, '/tmp', userState])
for (const w of tmpWarnings(hostBefore, systemTmp)) console.log(`warning: before the suite: ${w}`)
// Every temporary folder of the run (the tests' own, the private MariaDB's, the snapshot cache) lives
// under one run folder: TMPDIR for every test process, removed at the end. Mode 0711: other users may
// pass through it to a folder a test opens to them, never list it.
const runRoot = mkdtempSync(join(systemTmp, 'vba-test-run-'))
chmodSync(runRoot, 0o711)
process.env.TMPDIR = runRoot

// One private MariaDB for the whole run (files that run alone start their own).
const { loadWorld, newReaderPassword } = await import('../dist/test/helpers/world.js')
const dbDir = mkdtempSync(join(tmpdir(), 'vba-mariadb-'))
let server
try {
  server = await startMariaDb({ dir: join(dbDir, 'server') })
} catch (e) {
  console.error(`could not start the private MariaDB: ${e instanceof Error ? e.message : e}`)
  rmSync(runRoot, { recursive: true, force: true })
  console.log('0 passed, 1 failed')
  process.exit(1)
}
const readerPassword = newReaderPassword()
loadWorld(server.sql, readerPassword)
process.env.VBA_TEST_MARIADB = JSON.stringify({
  port: server.port,
  socket: server.socket,
  dir: server.dir,
  readerPassword
})
// Snapshot indexes (on by default in the user's cache directory) go to a private directory of this run.
const cacheHome = mkdtempSync(join(tmpdir(), 'vba-cache-home-'))
process.env.XDG_CACHE_HOME = cacheHome
const stopServer = async () => {
  await server.stop()
  rmSync(runRoot, { recursive: true, force: true })
}
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    stopServer().finally(() => process.exit(130))
  })
console.log(`private MariaDB on 127.0.0.1:${server.port} (${server.dir})`)
// Property and random tests draw from one seed (test/helpers/seed.ts); a failure names it.
console.log(`seed ${process.env.VBA_TEST_SEED ?? '20261130 (the default; VBA_TEST_SEED=N replays another)'}`)

const parallel = Math.max(1, Math.min(2, cpus().length))
let passed = 0
let failed = 0
let skipped = 0
const failedFiles = []
const started = Date.now()

// A file that runs longer than this is killed and counted as failed (a hang is a failure, not a wait).
const FILE_TIMEOUT_MS = Number(process.env.VBA_TEST_FILE_TIMEOUT_MS ?? 600_000)

const runOne = (file) =>
  new Promise((resolve) => {
    const t0 = Date.now()
    const child = spawn(process.execPath, ['--enable-source-maps', file], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }
    })
    let out = ''
    const timer = setTimeout(() => {
      out += `\nkilled after ${FILE_TIMEOUT_MS / 1000} s (VBA_TEST_FILE_TIMEOUT_MS)\n`
      child.kill('SIGKILL')
    }, FILE_TIMEOUT_MS)
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      out += d
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const num = (label) => Number((out.match(new RegExp(`${label}:\\s+(\\d+)`)) ?? [])[1] ?? 0)
      const total = num('Total')
      const ok = num('Passed')
      const skip = num('Skipped')
      passed += ok
      skipped += skip
      const bad = total - ok - skip
      const rel = relative(root, file)
      const secs = ((Date.now() - t0) / 1000).toFixed(1)
      if (code !== 0 || bad > 0 || total === 0) {
        // A file that crashed or ran no test counts as (at least) one failure.
        failed += Math.max(bad, 1)
        failedFiles.push(rel)
        process.stdout.write(`FAIL ${rel} (${secs}s, exit ${code ?? signal})\n${out}\n`)
      } else {
        process.stdout.write(`ok   ${rel} (${ok} tests, ${secs}s)\n`)
      }
      resolve()
    })
  })

const queue = [...files]
await Promise.all(
  Array.from({ length: parallel }, async () => {
    while (queue.length > 0) await runOne(queue.shift())
  })
)

await stopServer()
const hostAfter = await readHostState([systemTmp, '/tmp', userState])
const changed = hostChanges(hostBefore, hostAfter)
if (changed.length > 0) {
  failed += 1
  failedFiles.push('(the host: the suite changed the machine it ran on)')
  console.log(
    `\nFAIL the suite changed its host:\n  - ${changed.join('\n  - ')}\nbefore:\n${describeHostState(hostBefore)}\nafter:\n${describeHostState(hostAfter)}`
  )
} else {
  console.log(
    `\nhost unchanged: ${systemTmp} ${hostAfter.folders.find((f) => f.path === systemTmp)?.mode}, machine's MariaDB temporary table: ${hostAfter.mariadb}`
  )
}
console.log(
  `\n${files.length} files in ${((Date.now() - started) / 1000).toFixed(1)}s${failedFiles.length ? `; failed: ${failedFiles.join(', ')}` : ''}`
)
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(failed > 0 || files.length === 0 ? 1 : 0)
