/**
 * What the docs promise is what a fresh strict TypeScript project gets from the packed tarball:
 * `npm pack`, the package unpacked into the project's node_modules (its dependencies are the
 * lockfile's, linked from this repository: no network), every ```ts block of README.md and docs/
 * type-checked (strict, NodeNext) and run against the demo world the package's own `vba
 * demo-world` writes. Also: CommonJS `require`, the exports map (no deep imports), and the file
 * list of the tarball.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { repoRoot, tempDir } from '../helpers/fs.js'
import { postgresStore, type TestStore } from '../helpers/stores.js'
import { packTarball } from '../helpers/pack.js'

const root = repoRoot()
const work = tempDir('docs-examples')
const { tarball, files: packedFiles } = packTarball(work)
execFileSync('tar', ['-xzf', tarball, '-C', work])

/** A fresh project: package.json, a strict tsconfig, the package and its dependencies in node_modules. */
const project = path.join(work, 'consumer')
mkdirSync(path.join(project, 'node_modules', '@types'), { recursive: true })
cpSync(path.join(work, 'package'), path.join(project, 'node_modules', 'vba-case-research'), { recursive: true })
const pkg = JSON.parse(readFileSync(path.join(work, 'package', 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>
  peerDependencies: Record<string, string>
  name: string
}
// The docs' examples use the SQLite demo world, a PostgreSQL store and MCP: a consumer that does
// installs those optional peers beside the package (test/docs/consumer.int.test.ts runs without them).
for (const dep of [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies), '@types/node']) {
  // scoped packages (@modelcontextprotocol/sdk) live one directory down
  mkdirSync(path.dirname(path.join(project, 'node_modules', dep)), { recursive: true })
  symlinkSync(path.join(root, 'node_modules', dep), path.join(project, 'node_modules', dep), 'dir')
}
writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
writeFileSync(
  path.join(project, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      rootDir: 'examples',
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      outDir: 'out',
      types: ['node']
    },
    include: ['examples/*.ts']
  })
)

/** Every ```ts block of the README and docs/, named by file and position. */
const blocks = (): Array<{ name: string; code: string }> => {
  const files = [
    'README.md',
    ...readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`)
  ]
  return files.flatMap((f) => {
    const text = readFileSync(path.join(root, f), 'utf8')
    return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({
      name: `${f.replace(/[/.]/g, '_')}_${i + 1}`,
      code: m[1] ?? ''
    }))
  })
}

const docs = suite('docs examples against the packed tarball')

docs(
  'the tarball ships the library, its types, the format spec, config, docs and the eval suite: no test, bench, script or fixture file',
  () => {
    const files = packedFiles
    assert.ok(
      files.includes('dist/src/index.js') &&
        files.includes('dist/src/index.d.ts') &&
        files.includes('dist/src/fp.js') &&
        files.includes('dist/src/testing.js')
    )
    assert.ok(
      files.includes('case-format/SPEC.md') && files.includes('config/trinitycore.toml') && files.includes('README.md')
    )
    // vba eval's truth schema and the public AzerothCore suite
    assert.ok(files.includes('eval/truth.schema.json') && files.includes('eval/azerothcore/ac-7246/report.md'))
    const stray = files.filter(
      (f) =>
        /^(dist\/)?(test|bench|scripts)\//.test(f) ||
        f.includes('fixtures') ||
        f.includes('examples/') ||
        f.endsWith('.map')
    )
    assert.equal(stray, [])
  }
)

const stores: TestStore[] = []
docs.after(async () => {
  for (const s of stores) await s.drop().catch(() => undefined)
})

docs('every ts block type-checks in a fresh strict project and runs against the demo world', async () => {
  const examples = blocks()
  assert.ok(examples.length >= 5, `found ${examples.length} examples`)
  mkdirSync(path.join(project, 'examples'))
  for (const e of examples) writeFileSync(path.join(project, 'examples', `${e.name}.ts`), `${e.code}\nexport {}\n`)
  const tsc = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project],
    { encoding: 'utf8' }
  )
  assert.is(tsc.status, 0, `tsc:\n${tsc.stdout}${tsc.stderr}`)
  const vba = path.join(project, 'node_modules', 'vba-case-research', 'dist', 'vba', 'main.js')
  for (const e of examples) {
    // Every example gets a fresh PostgreSQL database as VBA_STORE (the fleet examples use it).
    const store = await postgresStore('docs')
    stores.push(store)
    const cwd = path.join(work, 'run', e.name)
    mkdirSync(cwd, { recursive: true })
    const world = spawnSync(process.execPath, [vba, 'demo-world', 'demo'], { cwd, encoding: 'utf8' })
    assert.is(world.status, 0, world.stderr)
    const run = spawnSync(process.execPath, [path.join(project, 'out', `${e.name}.js`)], {
      cwd,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, VBA_STORE: store.url }
    })
    assert.is(run.status, 0, `${e.name} failed:\n${run.stdout}\n${run.stderr}`)
    if (e.name.startsWith('README')) assert.match(run.stdout, /CONCLUDED after \d+ turns; receipt \d+:sha256:/)
    if (e.name.startsWith('docs_operations'))
      assert.match(run.stdout, /1 claim\(s\), 1 concluded, ended: idle \{\}\nCONCLUDED/, run.stdout + run.stderr)
    if (e.code.includes('my-model-2026-11'))
      assert.match(run.stdout, /CONCLUDED my-model-2026-11 2480\n2480 my-model-2026-11/)
  }
})

docs('CommonJS require works on the Node versions engines admits; deep imports are refused by the exports map', () => {
  const engines = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } })
    .engines.node
  assert.is(engines, '>=20.19')
  const cjs = spawnSync(
    process.execPath,
    [
      '-e',
      "const v = require('vba-case-research'); const t = require('vba-case-research/testing'); if (typeof v.openVba !== 'function' || typeof t.scriptedModel !== 'function' || typeof require('vba-case-research/fp').verifyCase !== 'function') process.exit(1)"
    ],
    { cwd: project, encoding: 'utf8' }
  )
  assert.is(cjs.status, 0, cjs.stderr)
  const deep = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import('vba-case-research/dist/src/adapters/case-store/append.js').then(() => process.exit(1), (e) => process.exit(e.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' ? 0 : 2))"
    ],
    { cwd: project, encoding: 'utf8' }
  )
  assert.is(deep.status, 0, deep.stderr)
  const raw = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import('vba-case-research').then((m) => process.exit('appendCommand' in m || 'sealEvent' in m ? 1 : 0))"
    ],
    { cwd: project, encoding: 'utf8' }
  )
  assert.is(raw.status, 0, 'raw appends are not in the root entry')
})

docs.run()
