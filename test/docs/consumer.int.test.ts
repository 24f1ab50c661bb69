/**
 * The package as a consumer installs it, without any optional peer: `npm pack`, then a real
 * `npm ci --offline` of the tarball into a fresh project (its dependencies at the versions of this
 * repository's lockfile, from the local npm cache: no network), so no driver and no MCP SDK is
 * there. Source research and a directory case run end to end; each feature that needs a missing
 * peer says which package to install (PACKAGE_MISSING, exit 2) before it touches anything; then
 * `mysql2` is added (`npm install --offline`) and the world database (the suite's MariaDB) is read.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { OPTIONAL_PEERS } from '../../src/adapters/peers.js'
import { repoRoot, tempDir } from '../helpers/fs.js'
import { git } from '../helpers/git-repo.js'
import { packTarball } from '../helpers/pack.js'
import { mariaProfile, mariaWorld, PASSWORD_ENV } from '../helpers/world.js'

interface LockEntry {
  readonly version?: string
  readonly dev?: boolean
  readonly devOptional?: boolean
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
  readonly [key: string]: unknown
}
interface Lock {
  readonly packages: Record<string, LockEntry>
}

const root = repoRoot()
const work = tempDir('consumer')
const { tarball } = packTarball(work)
const spec = `file:${path.relative(path.join(work, 'project'), tarball)}`
const ours = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as Lock
const me = ours.packages[''] as LockEntry

/** Where `name`, required from the package at `from`, resolves in a lockfile (node's lookup upwards). */
const resolveIn = (lock: Lock, from: string, name: string): string | undefined => {
  for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
    const key = `${dir === '' ? '' : `${dir}/`}node_modules/${name}`
    if (lock.packages[key] !== undefined) return key
    if (dir === '') return undefined
  }
}

/**
 * The lockfile entries `name` needs (itself, what it depends on and the peers it requires, which
 * npm installs with it), from this repository's lockfile.
 */
const closure = (name: string): Record<string, LockEntry> => {
  const out: Record<string, LockEntry> = {}
  const todo = [`node_modules/${name}`]
  for (let key = todo.pop(); key !== undefined; key = todo.pop()) {
    const entry = ours.packages[key]
    if (entry === undefined || out[key] !== undefined) continue
    const { dev: _d, devOptional: _o, ...kept } = entry
    out[key] = kept
    const peers = Object.keys(entry.peerDependencies ?? {}).filter(
      (p) => entry.peerDependenciesMeta?.[p]?.optional !== true
    )
    for (const dep of [...Object.keys(entry.dependencies ?? {}), ...peers]) {
      const at = resolveIn(ours, key, dep)
      if (at !== undefined) todo.push(at)
    }
  }
  return out
}

/**
 * A consumer's package.json and lockfile: the tarball and its production dependencies (what
 * `npm install vba-case-research` brings), plus `extra` packages the consumer adds itself.
 */
const writeConsumer = (dir: string, extra: readonly string[]): void => {
  const production = Object.fromEntries(
    Object.entries(ours.packages).filter(
      ([k, v]) => k.startsWith('node_modules/') && v.dev !== true && v.devOptional !== true
    )
  )
  const added = Object.assign({}, ...extra.map(closure)) as Record<string, LockEntry>
  const dependencies = {
    'vba-case-research': spec,
    ...Object.fromEntries(extra.map((n) => [n, ours.packages[`node_modules/${n}`]?.version ?? '*']))
  }
  const pick = (keys: readonly string[]): Record<string, unknown> =>
    Object.fromEntries(keys.filter((k) => me[k] !== undefined).map((k) => [k, me[k]]))
  const lock = {
    name: 'consumer',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'consumer', dependencies },
      'node_modules/vba-case-research': {
        ...pick(['version', 'license', 'dependencies', 'peerDependencies', 'peerDependenciesMeta', 'bin', 'engines']),
        resolved: spec,
        integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`
      },
      ...production,
      ...added
    }
  }
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies })
  )
  writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2))
}

const npm = (dir: string, ...args: string[]): void => {
  const r = spawnSync('npm', [...args, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: dir,
    encoding: 'utf8'
  })
  assert.is(r.status, 0, `npm ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`)
}

const project = path.join(work, 'project')
mkdirSync(project)
writeConsumer(project, [])
npm(project, 'ci')

const vba = (
  args: readonly string[],
  env: Record<string, string> = {}
): { code: number; stdout: string; stderr: string } => {
  const r = spawnSync(path.join(project, 'node_modules', '.bin', 'vba'), args, {
    cwd: project,
    encoding: 'utf8',
    env: { ...process.env, ...env }
  })
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr }
}

// A small core: one script, committed with the system git.
const core = path.join(work, 'core')
mkdirSync(path.join(core, 'src'), { recursive: true })
writeFileSync(
  path.join(core, 'src', 'npc_wolpertinger.cpp'),
  'struct npc_wild_wolpertingerAI : public ScriptedAI\n{\n    void SpellHit() override { me->DespawnOrUnsummon(); }\n};\n'
)
git(core, 'init', '-q', '-b', 'main')
git(core, 'add', '-A')
git(core, 'commit', '-q', '-m', 'wolpertinger')
const commit = git(core, 'rev-parse', 'HEAD')
const source = `[source]\nrepository = ${JSON.stringify(core)}\nurl = "https://example.org/core.git"\ncommit = "${commit}"\n`
writeFileSync(path.join(project, 'source.toml'), source)
writeFileSync(path.join(project, 'search.json'), JSON.stringify({ kind: 'source.search', text: 'DespawnOrUnsummon' }))

const consumer = suite('the packed package without optional peers')

consumer('the drivers and the MCP SDK are optional peers: not installed, not in dependencies', () => {
  const pkg = JSON.parse(
    readFileSync(path.join(project, 'node_modules', 'vba-case-research', 'package.json'), 'utf8')
  ) as {
    dependencies: Record<string, string>
    peerDependencies: Record<string, string>
    peerDependenciesMeta: Record<string, { optional?: boolean }>
  }
  const peers = Object.keys(OPTIONAL_PEERS).sort()
  assert.equal(Object.keys(pkg.peerDependencies).sort(), peers)
  assert.equal(
    peers.filter((p) => pkg.peerDependenciesMeta[p]?.optional !== true || pkg.dependencies[p] !== undefined),
    []
  )
  assert.equal(
    peers.filter((p) => existsSync(path.join(project, 'node_modules', p))),
    []
  )
})

/** Imports the three entries (none may load a peer) and checks one name of each. */
const LOADS_EVERY_ENTRY =
  "const [a, b, c] = await Promise.all([import('vba-case-research'), import('vba-case-research/fp'), import('vba-case-research/testing')]); if (typeof a.openVba !== 'function' || typeof b.verifyCase !== 'function' || typeof c.writeDemoWorld !== 'function') process.exit(1)"

consumer('the entries load, and source research and a directory case run end to end', () => {
  const entries = spawnSync(process.execPath, ['--input-type=module', '-e', LOADS_EVERY_ENTRY], {
    cwd: project,
    encoding: 'utf8'
  })
  assert.is(entries.status, 0, entries.stderr)
  const research = vba(['research', '--config', 'source.toml', '--query', 'search.json'])
  assert.is(research.code, 0, research.stderr)
  const capture = JSON.parse(research.stdout) as { kind: string; origin: { commit: string }; result: unknown }
  assert.is(capture.kind, 'source.search')
  assert.is(capture.origin.commit, commit)
  assert.match(JSON.stringify(capture.result), 'npc_wolpertinger.cpp')

  assert.is(vba(['case', 'init', 'case']).code, 0)
  const query = vba(['case', 'query', 'case', '--config', 'source.toml', '--query', 'search.json'])
  assert.is(query.code, 0, query.stderr)
  assert.match(query.stdout, /^recorded source\.search as evidence E1/)
  assert.is(vba(['case', 'note', 'case', 'seen in the core']).code, 0)
  const verified = vba(['verify', 'case'])
  assert.is(verified.code, 0, verified.stdout + verified.stderr)
  assert.match(verified.stdout, '\nVALID')
  assert.is(vba(['export', 'case', 'case.tar']).code, 0)
  const imported = vba(['import', 'case.tar', 'copy'])
  assert.is(imported.code, 0, imported.stderr)
  assert.is(vba(['verify', 'copy']).code, 0)
  const report = vba(['report', 'copy', '--out', 'report.html'])
  assert.is(report.code, 0, report.stderr)
  assert.match(readFileSync(path.join(project, 'report.html'), 'utf8'), 'DespawnOrUnsummon')
})

consumer('a feature whose peer is missing names the package to install, and does nothing', () => {
  writeFileSync(
    path.join(project, 'mysql.toml'),
    '[database]\nclient = "mysql2"\nhost = "127.0.0.1"\nport = 9\nuser = "reader"\ndatabases = ["world"]\nsnapshot_id = "s1"\n\n[database.allowed_tables]\nworld = ["creature_template"]\n'
  )
  writeFileSync(path.join(project, 'tables.json'), JSON.stringify({ kind: 'database.tables', database: 'world' }))
  const cases: Array<[string, readonly string[]]> = [
    ['better-sqlite3', ['demo-world', 'world']],
    ['pg', ['case', 'init', 'x', '--store', 'postgres://vba@127.0.0.1:9/none']],
    ['mysql2', ['store', 'migrate', '--store', 'mysql://vba@127.0.0.1:9/none']],
    ['mysql2', ['research', '--config', 'mysql.toml', '--query', 'tables.json']],
    ['@modelcontextprotocol/sdk', ['mcp', '--config', 'source.toml', '--case', 'case']]
  ]
  for (const [pkg, args] of cases) {
    const r = vba(args)
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, `vba: PACKAGE_MISSING: `)
    assert.match(r.stderr, `needs the package ${pkg}, which is not installed: npm install ${pkg}`)
  }
  assert.not.ok(existsSync(path.join(project, 'world')), 'demo-world wrote nothing')
  const status = vba(['status', 'case', '--json'])
  assert.is((JSON.parse(status.stdout) as { state: string }).state, 'NOT_STARTED', 'mcp started nothing')
})

consumer('with mysql2 added, the world database is read', async () => {
  writeConsumer(project, ['mysql2'])
  npm(project, 'install')
  assert.ok(existsSync(path.join(project, 'node_modules', 'mysql2')))
  const { shared } = await mariaWorld()
  const profile = mariaProfile(shared)
  const count = { kind: 'database.count', table: 'creature_queststarter', filters: [] }
  writeFileSync(path.join(project, 'count.json'), JSON.stringify(count))
  const r = vba(['research', '--config', profile, '--query', 'count.json'], {
    [PASSWORD_ENV]: shared.readerPassword
  })
  assert.is(r.code, 0, r.stderr)
  const capture = JSON.parse(r.stdout) as { kind: string; origin: { client: string }; result: { count: number } }
  assert.is(capture.kind, 'database.count')
  assert.is(capture.origin.client, 'mysql2')
  assert.ok(capture.result.count > 0, r.stdout)
})

consumer.run()
