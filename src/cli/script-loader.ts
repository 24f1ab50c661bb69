/**
 * The CLI as one classic script with V8's code cache (the bundle's dist/vba/cli-script.js and
 * cli-script.cache, both written by scripts/bundle.mjs). Node 20 has no compile cache for ES modules,
 * so the bundle holds every verb in one CommonJS script, compiled here by `vm.Script` with the cache
 * V8 made of it at build time: a later `vba research` does not parse and compile the code it runs.
 *
 * The cache is trusted like the code beside it: it is written by the build only, into dist/ (it
 * ships in the package with the script), never at run time. It is used only for the script it was
 * made from and only when intact: its first line names the SHA-256 of both (V8 itself checks the
 * source's length, not its bytes, nor a checksum of the cache outside its debug builds). Another
 * Node or V8 version, other V8 flags or other CPU features make V8 reject it (`cachedDataRejected`),
 * and a missing, stale or damaged one is ignored: the script is then compiled as any other.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import vm from 'node:vm'

/**
 * The script's `import()` of an optional peer (pg, mysql2, better-sqlite3, the MCP SDK: ES modules
 * loaded on first use), resolved from this module (in the package, as the script is). A function
 * V8 deserializes from a code cache has lost the link Node's own import() of a vm script needs (it
 * fails with ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING; Node 20's vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER
 * also warns that it is experimental), so the bundle calls this instead (scripts/bundle.mjs).
 */
const importPeer = (specifier: string): Promise<unknown> => import(specifier)

/** The first line of a cache file: this, the SHA-256 of the script, that of the cache data. */
export const CODE_CACHE_MAGIC = 'vba-code-cache 1'

/** What became of the code cache: used, rejected by V8, or not offered (none, stale or damaged). */
export type CodeCacheUse = 'accepted' | 'rejected' | 'absent' | 'stale'

/** The script's exports (src/cli/start.ts). */
export interface CliScript {
  readonly start: (argv?: readonly string[]) => Promise<void>
}

export interface LoadedCliScript {
  readonly script: vm.Script
  readonly exports: CliScript
  readonly cache: CodeCacheUse
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

/** The cache file's data when it was made from `source` and is intact, else why not. */
export const readCodeCache = (file: string, source: Uint8Array): Buffer | 'absent' | 'stale' => {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch {
    return 'absent'
  }
  const nl = bytes.indexOf(10)
  if (nl < 0 || nl > 200) return 'stale'
  const [magic, version, ofSource, ofData] = bytes.subarray(0, nl).toString('latin1').split(' ')
  const data = bytes.subarray(nl + 1)
  return `${magic} ${version}` === CODE_CACHE_MAGIC && ofSource === sha256(source) && ofData === sha256(data)
    ? data
    : 'stale'
}

/** The first line of the cache file for `data`, made of the script `source`. */
export const codeCacheHeader = (source: Uint8Array, data: Uint8Array): Buffer =>
  Buffer.from(`${CODE_CACHE_MAGIC} ${sha256(source)} ${sha256(data)}\n`, 'latin1')

/**
 * Compiles and runs the CLI script `file` (with the code cache `cacheFile` when it can be used): its
 * top-level code defines the modules, `exports.start` runs a command line. The script is ASCII (the
 * bundle escapes every other character), so it is read as Latin-1: one byte a character, as V8 keeps it.
 */
/**
 * V8's flags for the CLI: an interrupt budget of four times V8's default (67,584), so a function
 * is compiled by TurboFan only when it has run four times as long. A first-ever research builds
 * the snapshot index on two threads while V8 compiled ~95 functions on its helper threads, ~300 ms
 * of CPU on the 2-core test machine, many of them warm only briefly (the listing's walk, the plan,
 * Node's own buffer and file functions, the search's): there TurboFan's CPU ~300 -> ~180 ms, the
 * process's ~1.55 -> ~1.43 s, with the two threads' own CPU unchanged; a later search ~178 -> ~163 ms
 * of task-clock (docs/performance.md). Set before the script is compiled: its code cache is made and
 * used under the same flags (V8 rejects a cache made under others). Node's code cache of its own
 * modules was made under the defaults, so the modules it loads afterwards are compiled (~20 ms of
 * the writer thread's CPU, counted in the figures above).
 */
export const V8_FLAGS = '--interrupt-budget=270336'

export const loadCliScript = (file: string, cacheFile: string | null): LoadedCliScript => {
  setFlagsFromString(V8_FLAGS)
  const source = readFileSync(file)
  const cached = cacheFile === null ? 'absent' : readCodeCache(cacheFile, source)
  const script = new vm.Script(source.toString('latin1'), {
    filename: file,
    ...(typeof cached === 'string' ? {} : { cachedData: cached })
  })
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: object },
    filename: string,
    dirname: string,
    metaUrl: string,
    importPeer: (specifier: string) => Promise<unknown>
  ) => void
  const module = { exports: {} }
  wrapper(module.exports, createRequire(file), module, file, path.dirname(file), pathToFileURL(file).href, importPeer)
  return {
    script,
    exports: module.exports as CliScript,
    cache: typeof cached === 'string' ? cached : script.cachedDataRejected === true ? 'rejected' : 'accepted'
  }
}
