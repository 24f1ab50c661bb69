#!/usr/bin/env node
// Bundles the `vba` binary (the CLI and `vba mcp`) into dist/vba:
//   main.js           the bin (src/cli/bin.ts): answers --version, else runs the CLI script
//   cli-script.js     every verb in one classic (CommonJS) script, wrapped in a function
//   cli-script.cache  V8's code cache of that script, made at build time by scripts/code-cache.mjs
//                     after a representative warm-up (a first-ever and later `vba research`)
//   line-worker.js, index-writer-worker.js: the worker threads
//   package.json      {"type":"commonjs"}: the bin and the workers are CommonJS
// Node 20 caches the compiled code of no ES module, so a start-up that loaded a graph of ES chunks
// parsed and compiled all of them on every run; one script with its code cache does neither
// (src/cli/script-loader.ts says how the cache is checked and why it is trusted like the code).
// The library's ESM entries (dist/src/index.js and the subpath exports) stay as tsc emits them.
//
// Input is tsc's output (dist/src), so run after `tsc -p tsconfig.json`. `new URL('./line-worker.js',
// import.meta.url)` resolves from the script (import.meta.url is its file's URL there). Packages that
// load code by computed paths (knex's dialects), native or optional ones, and the report's Chromium
// stay external and are resolved from node_modules at run time, only by the verbs that need them.
// Usage: node scripts/bundle.mjs [--quiet] [--meta FILE]   (--meta: esbuild's metafile of the script)
import { build } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
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

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  legalComments: 'eof',
  metafile: true,
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning'
}

rmSync(outdir, { recursive: true, force: true })
mkdirSync(outdir, { recursive: true })

// The CLI script: src/cli/start.ts and all it imports, lazily imported verb modules included (esbuild
// evaluates those on first import), as the body of a function the loader calls with what a CommonJS
// module gets, and the URL of the script for import.meta.url.
const script = await build({
  ...common,
  entryPoints: [join(src, 'cli', 'start.js')],
  write: false,
  outfile: join(outdir, 'cli-script.js'),
  format: 'cjs',
  charset: 'ascii',
  define: { 'import.meta.url': '__vbaMetaUrl' },
  banner: { js: '(function (exports, require, module, __filename, __dirname, __vbaMetaUrl, __vbaImport) {' },
  footer: { js: '})' },
  plugins: [esModules, lazyChildProcess]
})
// esbuild keeps other characters of regular expression literals as they are: escaped here, so the
// script is ASCII and is read as Latin-1. A \u escape means the same character in a string, a
// template's cooked text, a regular expression and an identifier (not in a tagged template's raw text).
let text = script.outputFiles[0].text.replace(
  /[^\x00-\x7f]/g,
  (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
)
// The optional peers esbuild left as `import("name")` are imported through the loader's function
// (src/cli/script-loader.ts says why); every one of them, and nothing else, is rewritten.
const peers = new Set(
  Object.values(script.metafile.outputs).flatMap((o) =>
    o.imports.filter((i) => i.kind === 'dynamic-import' && i.external).map((i) => i.path)
  )
)
const rewritten = new Set()
text = text.replace(/(?<![\w$.])import\("([^"\\]+)"\)/g, (call, name) => {
  if (!peers.has(name)) return call
  rewritten.add(name)
  return `__vbaImport(${JSON.stringify(name)})`
})
if (rewritten.size !== peers.size) {
  console.error(`bundle: import() of ${[...peers].filter((p) => !rewritten.has(p)).join(', ')} not found in the script`)
  process.exit(1)
}
writeFileSync(join(outdir, 'cli-script.js'), text, 'latin1')

// The bin and the worker threads are CommonJS too (dist/vba/package.json says so): Node then starts
// them without its ES module loader (~15 M instructions of a ~600 M later `vba research`).
const commonJs = {
  ...common,
  format: 'cjs',
  define: { 'import.meta.url': '__vbaMetaUrl' },
  banner: { js: 'var __vbaMetaUrl = require("node:url").pathToFileURL(__filename).href;' }
}
writeFileSync(join(outdir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`)
// The bin: no verb, so `vba --version` reads one small file.
const bin = await build({ ...commonJs, entryPoints: { main: join(src, 'cli', 'bin.js') }, outdir })
// The worker threads, started by URL from the script.
const workers = await build({
  ...commonJs,
  entryPoints: {
    'line-worker': join(src, 'adapters', 'case-store', 'line-worker.js'),
    'index-writer-worker': join(src, 'adapters', 'git', 'index-writer-worker.js')
  },
  outdir,
  plugins: [esModules]
})

// The code cache, made by running the script (a failure leaves none: the bin then compiles the
// script without one, correct but slower to start).
const cache = spawnSync(process.execPath, [join(root, 'scripts', 'code-cache.mjs')], {
  stdio: ['ignore', 'ignore', 'pipe'],
  encoding: 'utf8'
})
if (cache.status !== 0) {
  rmSync(join(outdir, 'cli-script.cache'), { force: true })
  console.error(`bundle: no code cache for dist/vba/cli-script.js (scripts/code-cache.mjs failed):\n${cache.stderr}`)
}

const meta = process.argv.indexOf('--meta')
if (meta > 0 && process.argv[meta + 1] !== undefined)
  writeFileSync(process.argv[meta + 1], JSON.stringify(script.metafile))
if (!process.argv.includes('--quiet')) {
  const outputs = [bin, workers].flatMap((r) => Object.values(r.metafile.outputs))
  const bytes = outputs.reduce((n, o) => n + o.bytes, text.length)
  let cached = 0
  try {
    cached = statSync(join(outdir, 'cli-script.cache')).size
  } catch {}
  console.log(
    `bundle: dist/vba, ${outputs.length + 1} files, ${(bytes / 1024).toFixed(0)} KiB, code cache ${(cached / 1024).toFixed(0)} KiB`
  )
}
