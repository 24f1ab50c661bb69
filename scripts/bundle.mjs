#!/usr/bin/env node
// Bundles the `vba` binary (the CLI and `vba mcp`) into dist/vba: one entry file that loads in
// a single read, and a chunk per lazily imported verb group, so `vba --version` and a one-shot
// research process do not resolve and compile ~70 modules each. The library's ESM entries
// (dist/src/index.js and the subpath exports) stay as tsc emits them.
//
// Input is tsc's output (dist/src), so run after `tsc -p tsconfig.json`. The two worker entries
// are bundled beside the chunks under their own names: `new URL('./line-worker.js',
// import.meta.url)` resolves from whichever chunk starts them. Packages that load code by
// computed paths (knex's dialects), native or optional ones, and the report's Chromium stay
// external and are resolved from node_modules at run time, only by the verbs that need them.
// Usage: node scripts/bundle.mjs [--quiet] [--meta FILE]   (--meta: esbuild's metafile, what each chunk holds)
import { build } from 'esbuild'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const src = join(root, 'dist', 'src')
const outdir = join(root, 'dist', 'vba')
try {
  statSync(join(src, 'cli', 'main.js'))
} catch {
  console.error('bundle: dist/src/cli/main.js is missing: run `tsc -p tsconfig.json` first')
  process.exit(2)
}

export const EXTERNAL = [
  // optional peers: loaded on first use, a coded error names the package when missing
  'pg',
  'pg-query-stream',
  'mysql2',
  'better-sqlite3',
  '@modelcontextprotocol/sdk',
  // resolves its dialects and drivers by computed require paths
  'knex',
  // the report's browser
  '@sparticuz/chromium',
  'puppeteer-core',
  'playwright-core'
]

// fp-ts and io-ts ship CommonJS (lib/) and ES modules (es6/) of the same code. The sources import
// lib/ (what tsc's NodeNext resolution types); the bundle takes es6/, so no CommonJS interop copies
// each module's exports at start-up and unused functions are left out.
const esModules = {
  name: 'fp-ts-es6',
  setup(b) {
    b.onResolve({ filter: /^(fp-ts|io-ts)(\/lib\/.*)?$/ }, (args) =>
      b.resolve(
        args.path
          .replace(/^(fp-ts|io-ts)(\/lib\/(.*))?$/, (_, p, _l, m) => `${p}/es6/${m ?? 'index'}`)
          .replace(/\.js$/, ''),
        {
          kind: args.kind,
          resolveDir: args.resolveDir
        }
      )
    )
  }
}

// commander requires node:child_process (and with it net, dgram and streams) when it loads, for
// executable subcommands, which vba has none of: the bundle gives it the module on first use.
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]commander[\\/]/.test(args.importer) ? { path: 'child_process', namespace: 'vba-lazy' } : undefined
    )
    b.onLoad({ filter: /.*/, namespace: 'vba-lazy' }, () => ({
      contents:
        "let m; module.exports = new Proxy({}, { get: (_, k) => (m ??= process.getBuiltinModule('node:child_process'))[k] })",
      loader: 'js'
    }))
  }
}

const options = {
  absWorkingDir: root,
  entryPoints: {
    main: join(src, 'cli', 'main.js'),
    'line-worker': join(src, 'adapters', 'case-store', 'line-worker.js'),
    'index-writer-worker': join(src, 'adapters', 'git', 'index-writer-worker.js')
  },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  external: EXTERNAL,
  // CommonJS dependencies bundled into ESM still call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __vbaCreateRequire } from 'node:module'; const require = __vbaCreateRequire(import.meta.url);"
  },
  legalComments: 'eof',
  metafile: true,
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning'
}

// Every command loads the program (cli/program.js) and what it imports; split by which verbs also
// import each module, that was a dozen small chunks, each one more file to resolve, read and link
// at every start. A first pass finds those modules and the lazily imported verb modules; in the
// second, each verb module imports them all first, so they are one chunk (none of it is new to a
// verb: the program has loaded it before any verb runs). fp-ts and io-ts declare no side effects,
// so an import for its side effects would be dropped: they keep their own chunks.
const PROGRAM = join(src, 'cli', 'program.js')
const first = await build({ ...options, plugins: [esModules, lazyChildProcess], write: false })
const inputs = first.metafile.inputs
const abs = (key) => join(root, key)
const core = new Set()
const todo = [PROGRAM]
while (todo.length > 0) {
  const file = todo.pop()
  const key = Object.keys(inputs).find((k) => abs(k) === file)
  for (const i of inputs[key]?.imports ?? []) {
    if (i.external || (i.kind !== 'import-statement' && i.kind !== 'require-call') || i.path.includes(':')) continue
    const dep = abs(i.path)
    if (!core.has(dep)) {
      core.add(dep)
      todo.push(dep)
    }
  }
}
for (const p of core) if (/[\\/]node_modules[\\/](fp-ts|io-ts)[\\/]/.test(p)) core.delete(p)
const workers = Object.values(options.entryPoints)
const verbModules = new Set(
  Object.values(first.metafile.outputs)
    .flatMap((o) => (o.entryPoint === undefined ? [] : [abs(o.entryPoint)]))
    .filter((p) => p.startsWith(src) && !workers.includes(p) && !core.has(p))
)
const programChunk = {
  name: 'program-chunk',
  setup(b) {
    b.onResolve({ filter: /^vba:program-modules$/ }, () => ({ path: 'modules', namespace: 'vba-program' }))
    b.onLoad({ filter: /.*/, namespace: 'vba-program' }, () => ({
      contents: [...core].map((p) => `import ${JSON.stringify(p)}`).join('\n'),
      resolveDir: root,
      loader: 'js'
    }))
    b.onLoad({ filter: /\.js$/ }, (args) =>
      verbModules.has(args.path)
        ? { contents: `import 'vba:program-modules'\n${readFileSync(args.path, 'utf8')}`, loader: 'js' }
        : undefined
    )
  }
}
const result = await build({ ...options, plugins: [esModules, lazyChildProcess, programChunk] })
const meta = process.argv.indexOf('--meta')
if (meta > 0 && process.argv[meta + 1] !== undefined)
  writeFileSync(process.argv[meta + 1], JSON.stringify(result.metafile))
if (!process.argv.includes('--quiet')) {
  const outputs = Object.entries(result.metafile.outputs)
  const bytes = outputs.reduce((n, [, o]) => n + o.bytes, 0)
  console.log(`bundle: dist/vba, ${outputs.length} files, ${(bytes / 1024).toFixed(0)} KiB`)
}
