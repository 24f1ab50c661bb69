/**
 * The demo world, for trying the library and for its documentation's examples: the fixture world
 * database as an embedded SQLite file (read-only at research time), a small game-core repository
 * built with the system git (one commit), and a project profile binding both, with the
 * TrinityCore-family adapter settings (config/trinitycore.toml) and a small budget.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadSqlite, writeWorldSqliteWith } from './world-sqlite.js'
import { ALLOWED_WORLD_TABLES } from './world-fixture.js'
import { writeCoreRepo } from './core-repo.js'
import { makeDirsSync } from '../adapters/make-dirs.js'

/**
 * The package's root: the nearest folder above this module holding config/trinitycore.toml. The
 * module runs from dist/src/demo (the library) or from the CLI's bundle in dist/vba, so the depth
 * is looked up, not assumed.
 */
const packageRoot = (from: string): string => {
  let dir = from
  for (let i = 0; i < 8; i++) {
    if (existsSync(path.join(dir, 'config', 'trinitycore.toml'))) return dir
    const up = path.dirname(dir)
    if (up === dir) break
    dir = up
  }
  return path.join(from, '..', '..', '..')
}

/** The TrinityCore-family adapter profile shipped in config/. */
export const ADAPTER_PROFILE = path.join(
  packageRoot(path.dirname(fileURLToPath(import.meta.url))),
  'config',
  'trinitycore.toml'
)

/** @category Fixtures */
export interface DemoWorld {
  readonly dir: string
  /** The profile (project.toml) binding the world database and the repository. */
  readonly profile: string
  /** The bound commit of the demo repository. */
  readonly commit: string
}

/** The [database] section of the demo profile (the SQLite world, its allowlist). */
export const DEMO_DATABASE = `[database]
client = "better-sqlite3"
filename = "world.sqlite"
databases = ["world"]
snapshot_id = "demo-world-fixture"

[database.allowed_tables]
world = [${ALLOWED_WORLD_TABLES.map((t) => JSON.stringify(t)).join(', ')}]
`

/**
 * Writes the demo world into `dir` (created if missing; world.sqlite, core/ and project.toml must not exist).
 * @category Fixtures
 */
export const writeDemoWorld = async (dir: string): Promise<DemoWorld> => {
  for (const name of ['world.sqlite', 'core', 'project.toml']) {
    if (existsSync(path.join(dir, name)))
      throw new FailureError(
        failure('OUTPUT_EXISTS', `${path.join(dir, name)} exists; the demo world goes into a new directory`, {
          path: name
        })
      )
  }
  // The driver first: without it nothing is written.
  const sqlite = await loadSqlite()
  makeDirsSync(dir)
  writeWorldSqliteWith(sqlite, path.join(dir, 'world.sqlite'))
  const commit = writeCoreRepo(path.join(dir, 'core'))
  const profile = path.join(dir, 'project.toml')
  writeFileSync(
    profile,
    `${DEMO_DATABASE}\n[source]\nrepository = "core"\nurl = "https://example.org/demo-core.git"\ncommit = "${commit}"\n\n${readFileSync(ADAPTER_PROFILE, 'utf8')}\n[budget]\ntotal = 8\n`,
    { flag: 'wx' }
  )
  return { dir: path.resolve(dir), profile, commit }
}
