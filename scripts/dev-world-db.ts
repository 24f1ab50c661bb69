/**
 * scripts/dev-world-db: a private MariaDB world database for developers and operators.
 *
 *   scripts/dev-world-db start   --dir DIR [--port P]     start (initialising DIR on first use)
 *   scripts/dev-world-db stop    --dir DIR                stop the server of DIR (and only it)
 *   scripts/dev-world-db status  --dir DIR
 *   scripts/dev-world-db restore --dir DIR --dump FILE [--database world] [--port P]
 *                                                          fresh instance + dump + SELECT-only reader
 *   scripts/dev-world-db fixture --dir DIR [--port P]     fresh instance with the test fixture world
 *
 * The reader's password is written to DIR/reader.local.txt (mode 0600) and never printed; point
 * a profile's password_file at it. A port that answers for another data directory is refused.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync, createReadStream } from 'node:fs'
import { spawn } from 'node:child_process'
import * as path from 'node:path'
import { parseArgs } from 'node:util'
import { randomBytes } from 'node:crypto'
import { alive, findBinaries, startMariaDb, INSTALL_HINT, type MariaDbInstance } from './lib/mariadb-instance.js'
import { loadWorld, READER_USER } from './lib/world-db.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    dir: { type: 'string' },
    port: { type: 'string' },
    dump: { type: 'string' },
    database: { type: 'string', default: 'world' }
  }
})
const verb = positionals[0]
const fail = (message: string): never => {
  process.stderr.write(`dev-world-db: ${message}\n`)
  process.exit(2)
}
if (verb === undefined || !['start', 'stop', 'status', 'restore', 'fixture'].includes(verb))
  fail('usage: dev-world-db start|stop|status|restore|fixture --dir DIR [--port P] [--dump FILE] [--database NAME]')
if (values.dir === undefined) fail('--dir DIR is required')
const dir = path.resolve(values.dir ?? '')
const port = values.port === undefined ? undefined : Number(values.port)
if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) fail('--port must be 1-65535')
if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(values.database ?? '')) fail('--database must be a plain name')
const bin = findBinaries()
if (bin === null) fail(INSTALL_HINT)

const pidFile = path.join(dir, 'pid')
/** The pid of DIR's server, checked against the process's own --datadir. */
const ownPid = (): number | null => {
  if (!existsSync(pidFile)) return null
  const pid = Number(readFileSync(pidFile, 'utf8').trim())
  if (!Number.isInteger(pid) || !alive(pid)) return null
  const cmdline = existsSync(`/proc/${pid}/cmdline`) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : ''
  if (!cmdline.includes(`--datadir=${path.join(dir, 'data')}`))
    fail(`pid ${pid} does not serve ${dir}; refusing to touch it`)
  return pid
}

const writeReaderPassword = (): string => {
  const file = path.join(dir, 'reader.local.txt')
  const password = existsSync(file) ? readFileSync(file, 'utf8').trim() : randomBytes(18).toString('base64url')
  writeFileSync(file, `${password}\n`, { mode: 0o600 })
  return password
}

const main = async (): Promise<void> => {
  if (verb === 'status') {
    const pid = ownPid()
    process.stdout.write(
      pid === null
        ? `not running (${dir})\n`
        : `running, pid ${pid}, port ${readFileSync(path.join(dir, 'port'), 'utf8').trim()}\n`
    )
    return
  }
  if (verb === 'stop') {
    const pid = ownPid()
    if (pid === null) return void process.stdout.write('not running\n')
    process.kill(pid, 'SIGTERM')
    for (let i = 0; i < 600 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50))
    process.stdout.write(alive(pid) ? `pid ${pid} did not stop\n` : 'stopped\n')
    return
  }
  if ((verb === 'restore' || verb === 'fixture') && existsSync(path.join(dir, 'data'))) {
    fail(`${dir} already holds a data directory; ${verb} needs a fresh one`)
  }
  // What restore reads is checked before a server is started for it.
  const dump = values.dump === undefined ? undefined : path.resolve(values.dump)
  if (verb === 'restore') {
    if (dump === undefined) fail('restore needs --dump FILE')
    const st = statSync(dump ?? '', { throwIfNoEntry: false })
    if (st === undefined) fail(`the dump ${values.dump ?? ''} does not exist (${dump ?? ''})`)
    // a file, or a stream such as <(zcat world.sql.gz)
    if (st?.isDirectory() === true) fail(`the dump ${values.dump ?? ''} is a directory, not a file`)
  }
  if (ownPid() !== null) fail(`the server of ${dir} is already running`)
  // A server started again keeps the port its profile names: the one DIR/port recorded.
  const recorded = existsSync(path.join(dir, 'port'))
    ? Number(readFileSync(path.join(dir, 'port'), 'utf8').trim())
    : NaN
  const at = port ?? (verb === 'start' && Number.isInteger(recorded) && recorded > 0 ? recorded : undefined)
  const server = await startMariaDb({ dir, ...(at === undefined ? {} : { port: at }) })
  writeFileSync(path.join(dir, 'port'), `${server.port}\n`)
  if (verb === 'fixture') {
    loadWorld(server.sql, writeReaderPassword())
  } else if (verb === 'restore') {
    const db = values.database ?? 'world'
    try {
      await restoreDump(server, db, dump ?? '')
    } catch (e) {
      // Nothing half-made is left behind: the server this run started is stopped and its data
      // directory removed, so the same command can be run again once the dump is fixed.
      await server.stop()
      for (const name of ['data', 'pid', 'port', 'sock', 'tmp'])
        rmSync(path.join(dir, name), { recursive: true, force: true })
      fail(
        `${e instanceof Error ? e.message : String(e)}; the server was stopped and its data directory removed: run the same command again once the dump is fixed`
      )
    }
  }
  process.stdout.write(
    `running on 127.0.0.1:${server.port} (socket ${server.socket}); reader ${READER_USER}, password in ${path.join(dir, 'reader.local.txt')}\n`
  )
}

/** Loads the dump into `db` and creates the SELECT-only reader (its password in DIR/reader.local.txt). */
const restoreDump = async (server: MariaDbInstance, db: string, dump: string): Promise<void> => {
  server.sql(`CREATE DATABASE IF NOT EXISTS \`${db}\` CHARACTER SET utf8mb4;`)
  await new Promise<void>((resolve, reject) => {
    const child = spawn(bin?.client ?? 'mariadb', ['--no-defaults', `--socket=${server.socket}`, '--user=root', db], {
      stdio: ['pipe', 'inherit', 'inherit']
    })
    createReadStream(dump).on('error', reject).pipe(child.stdin)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`restore failed (exit ${code})`))))
  })
  const password = writeReaderPassword()
  server.sql(
    `${[
      `CREATE USER IF NOT EXISTS '${READER_USER}'@'localhost' IDENTIFIED BY '${password}'`,
      `CREATE USER IF NOT EXISTS '${READER_USER}'@'127.0.0.1' IDENTIFIED BY '${password}'`,
      `GRANT SELECT ON \`${db}\`.* TO '${READER_USER}'@'localhost'`,
      `GRANT SELECT ON \`${db}\`.* TO '${READER_USER}'@'127.0.0.1'`,
      'FLUSH PRIVILEGES'
    ].join(';\n')};\n`
  )
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)))
