/**
 * `vba check` and the words of profile mistakes, through the CLI against the private MariaDB
 * fixture world and a real git repository: every resolved path, the commit, the credentials, the
 * connection, the allowed and enrichment tables and columns, one trial query; exit 2 for a profile
 * mistake, 3 only for a provider that is down; the server's own words when it refuses.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { connect, createServer } from 'node:net'
import { git } from '../helpers/git-repo.js'
import { mariaWorld, mariaProfile, PASSWORD_ENV, READER_USER } from '../helpers/world.js'
import { ALLOWED_WORLD_TABLES } from '../../src/demo/world-fixture.js'
import { repoRoot, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'

const { shared, sql } = await mariaWorld()

/** A small real repository: one script file, one commit. */
const smallRepo = (): { dir: string; commit: string } => {
  const dir = path.join(tempDir('check-repo'), 'core')
  mkdirSync(path.join(dir, 'src', 'server'), { recursive: true })
  git(dir, 'init', '-q', '-b', 'main')
  writeFileSync(path.join(dir, 'src', 'server', 'npc_wolpertinger.cpp'), 'void AddSC_npc_wolpertinger() {}\n')
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'one')
  return { dir, commit: git(dir, 'rev-parse', 'HEAD') }
}
const repo = smallRepo()
const source = (repository: string, commit = repo.commit): string =>
  `\n[source]\nrepository = ${JSON.stringify(repository)}\nurl = "https://example.org/core.git"\ncommit = "${commit}"\n`
/** The adapter without its gameobject lookup: the fixture world has no gameobject_template (check says so). */
const withoutGameobjects = (text: string): string =>
  text.replace(/^\[enrichment\.entities\.gameobject\]\n(?:[^[\n].*\n)*/m, '')
const shippedAdapter = readFileSync(path.join(repoRoot(), 'config', 'trinitycore.toml'), 'utf8')
const adapter = withoutGameobjects(shippedAdapter)
const env = { [PASSWORD_ENV]: shared.readerPassword }

/** A free loopback port (nothing listens on it once this resolves; another process may take it later). */
const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

/** True when something listens on `port` now. */
const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const c = connect({ port, host: '127.0.0.1' })
    c.once('connect', () => {
      c.destroy()
      resolve(true)
    })
    c.once('error', () => resolve(false))
  })

const check = suite('vba check')

check('a ready profile: every path resolved, every step ok, exit 0 (text and --json)', () => {
  const profile = mariaProfile(shared, `${source(repo.dir)}\n${adapter}`)
  const r = vba(['check', '--config', profile], { env })
  assert.is(r.code, 0, r.stdout + r.stderr)
  assert.match(r.stdout, `relative paths resolve against the profile's folder ${path.dirname(profile)}`)
  assert.match(r.stdout, `[source] repository = ${repo.dir}`)
  assert.match(r.stdout, `ok   source commit: commit ${repo.commit} is in the repository`)
  assert.match(r.stdout, 'ok   connection: connected to 127.0.0.1:')
  assert.match(r.stdout, 'ok   enrichment: every table and column [enrichment] reads exists and is allowed')
  assert.match(r.stdout, 'ok   trial query: database.schema of ')
  assert.match(r.stdout, 'ok   trial query: database.rows of ')
  assert.match(r.stdout, 'check: the profile is ready')
  const j = vba(['check', '--config', profile, '--json'], { env })
  assert.is(j.code, 0, j.stderr)
  const report = JSON.parse(j.stdout) as { exit: number; steps: Array<{ outcome: string }> }
  assert.is(report.exit, 0)
  assert.ok(report.steps.every((s) => s.outcome === 'ok'))
})

check('[model] as vba investigate will judge it: a missing program, an unreachable URL, a key not set (exit 2)', () => {
  const base = `${source(repo.dir)}\n${adapter}`
  const cases: Array<[string, string, Record<string, string>]> = [
    [
      '[model]\ncommand = "no-such-model-xyz --x"\n',
      `FIX  model: CONFIG_INVALID: the model command's program "no-such-model-xyz" is not found on PATH`,
      {}
    ],
    [
      '[model]\nurl = "htp://127.0.0.1:1/v1"\nname = "m"\n',
      'FIX  model: CONFIG_INVALID: [model] url is not an http or https URL',
      {}
    ],
    [
      '[model]\nurl = "http://127.0.0.1:1/v1"\nname = "m"\napi_key_env = "VBA_TEST_CHECK_KEY"\n',
      'FIX  model: CONFIG_INVALID: [model] api_key_env names VBA_TEST_CHECK_KEY, which is not set',
      {}
    ],
    [
      '[model]\nurl = "http://127.0.0.1:1/v1"\nname = "m"\napi_key_env = "VBA_TEST_CHECK_KEY"\n',
      'ok   model: endpoint http://127.0.0.1:1, model m, key from $VBA_TEST_CHECK_KEY (not called',
      { VBA_TEST_CHECK_KEY: 'k' }
    ]
  ]
  for (const [model, line, extra] of cases) {
    const profile = mariaProfile(shared, `${base}\n${model}`)
    const r = vba(['check', '--config', profile], { env: { ...env, ...extra } })
    assert.is(r.code, Object.keys(extra).length === 0 ? 2 : 0, r.stdout + r.stderr)
    assert.match(r.stdout, line)
  }
})

check('an [enrichment] with lookups and no [database]: a warning that every lookup is left out, exit 0', () => {
  const dir = tempDir('check-no-db')
  const profile = path.join(dir, 'p.toml')
  writeFileSync(profile, `${source(repo.dir)}\n${adapter}`)
  const r = vba(['check', '--config', profile])
  assert.is(r.code, 0, r.stdout + r.stderr)
  assert.match(
    r.stdout,
    'WARN enrichment: [enrichment] looks up creature, quest, item in the world database, and the profile names none'
  )
  assert.match(r.stdout, 'check: the profile is ready (1 warning(s): WARN above)')
})

check('a short commit is refused in words (a full 40-hex commit id, got 9 characters), exit 2', () => {
  const profile = mariaProfile(shared, source(repo.dir, repo.commit.slice(0, 9)))
  for (const args of [['check'], ['research', '--query', '-']]) {
    const r = vba([...args, '--config', profile], { env, input: '{"kind":"database.tables"}' })
    assert.is(r.code, 2, r.stderr)
    assert.match(
      r.stderr,
      'CONFIG_INVALID: project.toml: [source] commit must be a full 40-hex commit id, got 9 characters'
    )
    assert.not.match(r.stderr, 'FullCommit')
  }
})

check(
  'a relative repository path that does not exist: the path it resolved to, against the profile folder, exit 2',
  () => {
    const profile = mariaProfile(shared, source('../core.git'))
    const resolved = path.join(path.dirname(path.dirname(profile)), 'core.git')
    const r = vba(['check', '--config', profile], { env })
    assert.is(r.code, 2, r.stdout + r.stderr)
    assert.match(r.stdout, `[source] repository = ${resolved}`)
    assert.match(
      r.stdout,
      `FIX  source repository: SOURCE_UNAVAILABLE: the configured repository ${resolved} does not exist (ENOENT)`
    )
    assert.match(r.stdout, 'check: 1 to fix in the profile, 0 provider(s) down (exit 2)')
  }
)

check('a commit the repository does not have, a missing password variable: profile mistakes, exit 2', () => {
  const profile = mariaProfile(shared, source(repo.dir, 'f'.repeat(40)))
  const r = vba(['check', '--config', profile], { env })
  assert.is(r.code, 2, r.stdout)
  assert.match(
    r.stdout,
    `FIX  source commit: CONFIG_INVALID: commit ${'f'.repeat(40)} is not in the repository ${repo.dir}`
  )
  const noVar = vbaWithout(PASSWORD_ENV, ['check', '--config', profile])
  assert.is(noVar.code, 2, noVar.stdout)
  assert.match(
    noVar.stdout,
    `FIX  credentials: CREDENTIALS_MISSING: environment variable ${PASSWORD_ENV} (named by password_env) is not set`
  )
})

check('an [enrichment] table outside the allowlist is a warning, not a mistake: exit 0, named with its code', () => {
  const profile = mariaProfile(shared, `${source(repo.dir)}\n${shippedAdapter}`)
  const r = vba(['check', '--config', profile], { env })
  assert.is(r.code, 0, r.stdout + r.stderr)
  assert.match(
    r.stdout,
    'WARN enrichment allowlist: TABLE_NOT_ALLOWED: [enrichment] reads gameobject_template, not in [database.allowed_tables]'
  )
  assert.match(r.stdout, 'check: the profile is ready (1 warning(s): WARN above)')
  // the ok line does not claim every table is allowed right above the warning that one is not
  assert.match(
    r.stdout,
    'ok   enrichment: every allowed table [enrichment] reads exists, with its columns (the others: below)'
  )
  assert.not.match(r.stdout, 'reads exists and is allowed')
  const j = JSON.parse(vba(['check', '--config', profile, '--json'], { env }).stdout) as Record<string, unknown>
  assert.is(j['warnings'], 1)
  assert.is(j['exit'], 0)
})

check('allowed and enrichment tables and columns the database does not have are named, exit 2', () => {
  const extra = `${source(repo.dir)}\n${adapter}`.replace(
    'columns = ["entry", "name", "spellid_1", "ScriptName"]',
    'columns = ["entry", "name", "spell_1", "ScriptName"]'
  )
  const profile = mariaProfile(shared, extra)
  const text = readFileSync(profile, 'utf8').replace('world = [', 'world = ["creature_questender", ')
  writeFileSync(profile, text)
  const r = vba(['check', '--config', profile], { env })
  assert.is(r.code, 2, r.stdout + r.stderr)
  assert.match(
    r.stdout,
    'FIX  allowed tables: TABLE_NOT_FOUND: world: allowed but not in the database: creature_questender'
  )
  assert.match(r.stdout, 'FIX  enrichment: COLUMN_UNKNOWN: world.item_template has no column spell_1')
})

check("a database that is down: DOWN with the driver's own words, exit 3", async () => {
  // A port found free can be taken before vba check connects: then it is tried on another one.
  let port = await freePort()
  let r = vba(['check', '--config', mariaProfile({ ...shared, port }, source(repo.dir))], { env })
  for (let i = 0; i < 5 && r.code !== 3 && (await listening(port)); i++) {
    port = await freePort()
    r = vba(['check', '--config', mariaProfile({ ...shared, port }, source(repo.dir))], { env })
  }
  assert.is(r.code, 3, r.stdout + r.stderr)
  assert.match(
    r.stdout,
    `DOWN connection: DATABASE_UNAVAILABLE: the world database is unavailable (the server said: ECONNREFUSED`
  )
  assert.match(r.stdout, `127.0.0.1:${port}`)
})

check("the server's own message and code reach the user (text and --json), the password removed", () => {
  const db = `vba_check_${process.pid}`
  // A server that cannot write its temporary files, as one whose tmpdir is not writable says it
  // (errno 1, EE_CANTCREATEFILE): a view whose column calls a function that signals exactly that.
  sql(`CREATE DATABASE ${db}; USE ${db}; CREATE TABLE quest (entry INT PRIMARY KEY); INSERT INTO quest VALUES (1);
DELIMITER //
CREATE FUNCTION refuse() RETURNS INT BEGIN SIGNAL SQLSTATE 'HY000' SET MESSAGE_TEXT = 'Can''t create/write to file ''/var/tmp/#sql-temptable-1'' (Errcode: 13 "Permission denied")', MYSQL_ERRNO = 1; RETURN 1; END//
DELIMITER ;
CREATE VIEW broken AS SELECT entry, refuse() AS said FROM quest;
${['localhost', '127.0.0.1'].map((h) => `GRANT SELECT ON ${db}.* TO '${READER_USER}'@'${h}'; GRANT EXECUTE ON FUNCTION ${db}.refuse TO '${READER_USER}'@'${h}';`).join('\n')}`)
  try {
    const dir = tempDir('check-broken')
    const profile = path.join(dir, 'project.toml')
    writeFileSync(
      profile,
      `[database]\nclient = "mysql2"\nhost = "127.0.0.1"\nport = ${shared.port}\nuser = "${READER_USER}"\npassword_env = "${PASSWORD_ENV}"\ndatabases = ["${db}"]\nsnapshot_id = "s1"\n\n[database.allowed_tables]\n${db} = ["broken"]\n`
    )
    const q = JSON.stringify({
      kind: 'database.rows',
      table: 'broken',
      columns: ['entry', 'said'],
      filters: [],
      offset: 0,
      limit: 5
    })
    const r = vba(['research', '--config', profile, '--query', '-'], { env, input: q })
    assert.is(r.code, 2, r.stdout + r.stderr)
    assert.match(
      r.stderr,
      /DATABASE_QUERY_FAILED: the world database refused the query \(the server said: EE_CANTCREATEFILE \(errno 1\): Can't create\/write to file '\/var\/tmp\/#sql-temptable-1' \(Errcode: 13 "Permission denied"\)\)/
    )
    const json = JSON.parse(r.stdout) as { error: { data: { driver_code: string; server_errno: number } } }
    assert.is(json.error.data.driver_code, 'EE_CANTCREATEFILE')
    assert.is(json.error.data.server_errno, 1)
    assert.not.match(r.stdout + r.stderr, shared.readerPassword)
    const c = vba(['check', '--config', profile], { env })
    assert.is(c.code, 3, c.stdout)
    assert.match(c.stdout, 'ok   trial query: database.schema of broken answered')
    assert.match(
      c.stdout,
      'DOWN trial query: DATABASE_QUERY_FAILED: the world database refused the query (the server said: EE_CANTCREATEFILE'
    )
  } finally {
    sql(`DROP DATABASE IF EXISTS ${db}`)
  }
})

check('config/azerothcore.toml with its include of the adapter: check and case prepare work as shipped', () => {
  const dir = tempDir('acore')
  for (const f of ['azerothcore.toml', 'trinitycore.toml'])
    copyFileSync(path.join(repoRoot(), 'config', f), path.join(dir, f))
  const profile = path.join(dir, 'azerothcore.toml')
  const shipped = readFileSync(profile, 'utf8')
  // The three marked values, and this test server's port; the world database of the fixture is `world`.
  const set = (text: string): string =>
    text
      .replace(/^repository = .*$/m, `repository = ${JSON.stringify(repo.dir)}`)
      .replace(/^commit = .*$/m, `commit = "${repo.commit}"`)
      .replace(/^password_env = .*$/m, `password_env = "${PASSWORD_ENV}"`)
      .replace(/^port = 3306/m, `port = ${shared.port}`)
      .replaceAll('acore_world', 'world')
  writeFileSync(profile, set(shipped))
  // As shipped, the allowlist names two AzerothCore tables the small fixture world does not have.
  const asShipped = vba(['check', '--config', profile], { env })
  assert.is(asShipped.code, 2, asShipped.stdout + asShipped.stderr)
  assert.match(asShipped.stdout, 'allowed but not in the database: creature_questender, gameobject_template')
  assert.match(asShipped.stdout, 'ok   enrichment: every table and column [enrichment] reads exists and is allowed')
  // With the fixture's tables only, the adapter's gameobject lookup has no table: without it, ready.
  writeFileSync(path.join(dir, 'trinitycore.toml'), adapter)
  writeFileSync(
    profile,
    set(shipped).replace(
      /^world = \[[^\]]*\]/m,
      `world = [${ALLOWED_WORLD_TABLES.map((t) => JSON.stringify(t)).join(', ')}]`
    )
  )
  const ready = vba(['check', '--config', profile], { env })
  assert.is(ready.code, 0, ready.stdout + ready.stderr)
  const kase = path.join(dir, 'case')
  assert.is(vba(['case', 'init', kase, '--title', 'Quest 11117']).code, 0)
  const input = path.join(dir, 'report.json')
  writeFileSync(input, JSON.stringify({ report: 'Wolpertingers vanish.', entities: [{ type: 'quest', id: 11117 }] }))
  const p = vba(['case', 'prepare', kase, '--config', profile, '--input', input], { env })
  assert.is(p.code, 0, p.stdout + p.stderr)
  assert.match(p.stdout, /revision 1 completed: \d+ facts/)
})

check('include is followed once: an included file that includes others is refused, naming both', () => {
  const dir = tempDir('include')
  writeFileSync(path.join(dir, 'a.toml'), 'include = "b.toml"\n')
  writeFileSync(path.join(dir, 'b.toml'), 'include = "c.toml"\n')
  const r = vba(['check', '--config', path.join(dir, 'a.toml')])
  assert.is(r.code, 2)
  assert.match(r.stderr, 'CONFIG_INVALID: b.toml (included by a.toml) may not include others')
  const missing = vba(['check', '--config', path.join(dir, 'b.toml')])
  assert.is(missing.code, 2)
  assert.match(
    missing.stderr,
    `CONFIG_NOT_FOUND: cannot read profile ${path.join(dir, 'c.toml')} (included by b.toml): ENOENT`
  )
})

/** `vba` with one variable removed from the environment. */
const vbaWithout = (name: string, args: string[]): ReturnType<typeof vba> => {
  const saved = process.env[name]
  delete process.env[name]
  try {
    return vba(args)
  } finally {
    if (saved !== undefined) process.env[name] = saved
  }
}

check.run()
