/**
 * A private MariaDB server in its own data directory, on a free loopback port and its own socket.
 * Used by the test suite, the db benchmark and scripts/dev-world-db. Never touches a server it did
 * not start: a port that answers with another data directory is refused.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, openSync, closeSync, statSync } from 'node:fs'
import * as net from 'node:net'
import * as path from 'node:path'

export interface MariaDbBinaries {
  readonly installDb: string
  readonly server: string
  readonly client: string
}

export const INSTALL_HINT =
  'MariaDB server binaries (mariadb-install-db, mariadbd, mariadb) are required: on Debian/Ubuntu run `apt-get install mariadb-server mariadb-client`'

const which = (names: readonly string[]): string | null => {
  const dirs = [...(process.env['PATH'] ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/usr/bin']
  for (const name of names)
    for (const d of dirs) if (d !== '' && existsSync(path.join(d, name))) return path.join(d, name)
  return null
}

/** The server binaries, or null when they are not installed. */
export const findBinaries = (): MariaDbBinaries | null => {
  const installDb = which(['mariadb-install-db', 'mysql_install_db'])
  const server = which(['mariadbd', 'mysqld'])
  const client = which(['mariadb', 'mysql'])
  return installDb === null || server === null || client === null ? null : { installDb, server, client }
}

export interface MariaDbInstance {
  readonly dir: string
  readonly port: number
  readonly socket: string
  readonly pid: number
  /** Runs SQL through the socket as root with the mariadb client; returns stdout (batch, raw). */
  readonly sql: (text: string, options?: { database?: string; user?: string; password?: string }) => string
  readonly stop: () => Promise<void>
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      srv.close(() => resolve(port))
    })
  })

const portOpen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })

/** True while process `pid` exists. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** A function running SQL through `socket` with the mariadb client (batch, raw, no column names). */
export const sqlClient =
  (bin: MariaDbBinaries, socket: string) =>
  (text: string, options: { database?: string; user?: string; password?: string } = {}): string => {
    const args = [
      '--no-defaults',
      `--socket=${socket}`,
      `--user=${options.user ?? 'root'}`,
      '--batch',
      '--raw',
      '--skip-column-names'
    ]
    if (options.password !== undefined) args.push(`--password=${options.password}`)
    if (options.database !== undefined) args.push(options.database)
    const r = spawnSync(bin.client, args, { input: text, encoding: 'utf8', maxBuffer: 1 << 28 })
    if (r.status !== 0) throw new Error(`mariadb client failed: ${r.stderr.trim()}`)
    return r.stdout
  }

export interface StartOptions {
  /** Where data/, sock, pid and err.log live (created if missing). */
  readonly dir: string
  /** Default: a free port. */
  readonly port?: number
  /** More server options, e.g. `--sql-mode=NO_BACKSLASH_ESCAPES`. */
  readonly args?: readonly string[]
  /** Called with each port just before the server is started on it (tests take the port there). */
  readonly beforeLaunch?: (port: number) => Promise<void>
}

/** What a failed bind writes to the error log. */
const BIND_FAILED = /Bind on TCP\/IP port|Address already in use|Can't start server: Bind/

/**
 * The instance's own directory for the server's temporary files (its bootstrap's too): not the
 * test run's shared TMPDIR, where a bootstrap once failed deleting its own temporary table while
 * other test files ran beside it.
 */
const instanceTmp = (dir: string): string => {
  const tmp = path.join(dir, 'tmp')
  mkdirSync(tmp, { recursive: true })
  return tmp
}

/**
 * Starts mariadbd on `port` and waits until it answers through its socket: its pid, or 'port taken'
 * when it could not bind the port (another process took it after it was picked).
 */
const launch = async (
  bin: MariaDbBinaries,
  o: {
    readonly dir: string
    readonly data: string
    readonly socket: string
    readonly pidFile: string
    readonly port: number
    readonly args: readonly string[]
  }
): Promise<number | 'port taken'> => {
  const errLog = path.join(o.dir, 'err.log')
  const logFrom = existsSync(errLog) ? statSync(errLog).size : 0
  const out = openSync(path.join(o.dir, 'stdout.log'), 'a')
  const child = spawn(
    bin.server,
    [
      '--no-defaults',
      `--datadir=${o.data}`,
      `--port=${o.port}`,
      '--bind-address=127.0.0.1',
      `--socket=${o.socket}`,
      '--user=root',
      `--pid-file=${o.pidFile}`,
      `--log-error=${errLog}`,
      `--tmpdir=${instanceTmp(o.dir)}`,
      '--skip-log-bin',
      '--innodb-buffer-pool-size=64M',
      '--innodb-log-file-size=16M',
      '--skip-name-resolve=0',
      ...o.args
    ],
    { detached: true, stdio: ['ignore', out, out] }
  )
  closeSync(out)
  child.unref()
  const pid = child.pid ?? -1
  const deadline = Date.now() + 60_000
  for (;;) {
    if (!alive(pid)) {
      const log = existsSync(errLog) ? readFileSync(errLog, 'utf8').slice(logFrom) : '(no log)'
      if (BIND_FAILED.test(log)) return 'port taken'
      throw new Error(`mariadbd exited during startup:\n${log.slice(-2000)}`)
    }
    if (existsSync(o.socket) && (await portOpen(o.port))) {
      try {
        sqlClient(bin, o.socket)('SELECT 1')
        return pid
      } catch {
        // not ready yet
      }
    }
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL')
      throw new Error('mariadbd did not become ready within 60 s')
    }
    await sleep(100)
  }
}

/** Initialises (if needed) and starts a private server; resolves when it accepts connections. */
export const startMariaDb = async (options: StartOptions): Promise<MariaDbInstance> => {
  const bin = findBinaries()
  if (bin === null) throw new Error(INSTALL_HINT)
  const dir = path.resolve(options.dir)
  const data = path.join(dir, 'data')
  const socket = path.join(dir, 'sock')
  const pidFile = path.join(dir, 'pid')
  mkdirSync(dir, { recursive: true })
  if (existsSync(pidFile)) {
    const old = Number(readFileSync(pidFile, 'utf8').trim())
    if (Number.isInteger(old) && alive(old))
      throw new Error(`a server for ${dir} is already running (pid ${old}); stop it first`)
  }
  if (!existsSync(path.join(data, 'mysql'))) {
    const init = spawnSync(
      bin.installDb,
      [
        '--no-defaults',
        `--datadir=${data}`,
        '--user=root',
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        `--tmpdir=${instanceTmp(dir)}`
      ],
      { encoding: 'utf8' }
    )
    if (init.status !== 0) throw new Error(`mariadb-install-db failed: ${init.stderr.slice(-2000)}`)
  }
  // A port picked free can be taken before the server binds it (MariaDB 10.11 cannot bind port 0
  // and tell which it got): then another port is picked and the start tried again.
  const tries = options.port === undefined ? 8 : 1
  let started: { port: number; pid: number } | null = null
  for (let i = 0; i < tries && started === null; i++) {
    const port = options.port ?? (await freePort())
    if (await portOpen(port)) {
      if (options.port === undefined) continue
      throw new Error(`port ${port} is already in use (by another server or data directory); refusing to touch it`)
    }
    await options.beforeLaunch?.(port)
    const pid = await launch(bin, { dir, data, socket, pidFile, port, args: options.args ?? [] })
    if (pid !== 'port taken') started = { port, pid }
    else if (options.port !== undefined)
      throw new Error(`port ${port} is already in use (by another server or data directory); refusing to touch it`)
  }
  if (started === null) throw new Error(`mariadbd could not bind a free port in ${tries} tries`)
  const { port, pid } = started
  const datadir = sqlClient(bin, socket)('SELECT @@datadir').trim().replace(/\/$/, '')
  if (path.resolve(datadir) !== path.resolve(data)) {
    throw new Error(`port ${port} answers with data directory ${datadir}, not ${data}; refusing to use it`)
  }
  const stop = async (): Promise<void> => {
    if (!alive(pid)) return
    process.kill(pid, 'SIGTERM')
    const until = Date.now() + 30_000
    while (alive(pid) && Date.now() < until) await sleep(50)
    if (alive(pid)) process.kill(pid, 'SIGKILL')
  }
  return { dir, port, socket, pid, sql: sqlClient(bin, socket), stop }
}
