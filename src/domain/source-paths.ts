/**
 * Paths a source query may name: relative, normalised, inside the snapshot. Traversal, absolute
 * paths, `.git` metadata, backslashes, NUL and control characters are refused before anything is
 * looked up. A path is never resolved against a file system: it only selects a tree entry.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'

export type PathFailure = Failure<'PATH_INVALID'>

const refuse = (role: string, why: string, value: string): E.Either<PathFailure, never> =>
  E.left(failure('PATH_INVALID', `${role} ${why}`, { role, value: value.slice(0, 200) }))

/**
 * Checks a file path (`role` "path") or a prefix (`role` "path_prefix", which may end with `/`).
 * Returns the path unchanged: normalising silently would make two requests mean one thing.
 */
export const checkSourcePath = (role: 'path' | 'path_prefix', p: string): E.Either<PathFailure, string> => {
  if (p.length === 0) return refuse(role, 'is empty', p)
  if (p.length > 1024) return refuse(role, 'is longer than 1024 characters', p)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(p)) return refuse(role, 'contains NUL or control characters', p)
  if (p.includes('\\')) return refuse(role, 'contains a backslash; use /', p)
  if (p.startsWith('/')) return refuse(role, 'must be relative to the repository root', p)
  if (/^[A-Za-z]:/.test(p)) return refuse(role, 'must be relative (drive letters are not paths here)', p)
  if (p.startsWith('-')) return refuse(role, 'must not start with "-"', p)
  const body = role === 'path_prefix' && p.endsWith('/') ? p.slice(0, -1) : p
  const segments = body.split('/')
  for (const s of segments) {
    if (s === '') return refuse(role, 'has an empty segment (//)', p)
    if (s === '.' || s === '..') return refuse(role, 'must be normalised (no . or .. segments)', p)
    if (s.toLowerCase() === '.git') return refuse(role, 'may not name .git metadata', p)
  }
  return E.right(p)
}

/** True when `path` lies under `prefix` (a prefix is matched as a literal string start). */
export const underPrefix = (path: string, prefix: string | undefined): boolean =>
  prefix === undefined || path.startsWith(prefix)

/** The extension of a path, lower case with its dot ('' when there is none). */
export const extensionOf = (path: string): string => {
  const base = path.slice(path.lastIndexOf('/') + 1)
  const dot = base.lastIndexOf('.')
  return dot <= 0 ? '' : base.slice(dot).toLowerCase()
}

/** Text extensions searched by default: C/C++, SQL, Python, JS/TS, C#, Java, Go, Rust, Lua, configuration and build files. */
export const DEFAULT_TEXT_EXTENSIONS: readonly string[] = [
  '.c',
  '.cc',
  '.cpp',
  '.cxx',
  '.h',
  '.hh',
  '.hpp',
  '.hxx',
  '.inl',
  '.ipp',
  '.tpp',
  '.sql',
  '.py',
  '.js',
  '.mjs',
  '.cjs',
  '.ts',
  '.tsx',
  '.jsx',
  '.cs',
  '.java',
  '.go',
  '.rs',
  '.lua',
  // the server's configuration (worldserver.conf.dist) and build files (CMakeLists.txt), where a
  // report about a rate or a module may lead: searched like the code
  '.dist',
  '.conf',
  '.cnf',
  '.ini',
  '.cmake',
  '.txt'
]
