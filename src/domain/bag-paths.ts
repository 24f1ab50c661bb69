/**
 * Paths inside a BagIt bag (RFC 8493): manifest and fetch entries, tar entry names. Pure checks:
 * a path is relative, has no empty, `.` or `..` segments, no NUL, and does not start with `/` or
 * `~` (a home-directory shortcut). Manifest paths encode CR, LF and % as %0D, %0A, %25.
 */

/** Decodes the three escapes RFC 8493 defines for manifest paths; anything else stays as written. */
export const decodeManifestPath = (p: string): string =>
  p.replace(/%0D|%0A|%25/gi, (m) => (m.toUpperCase() === '%0D' ? '\r' : m.toUpperCase() === '%0A' ? '\n' : '%'))

/** Encodes a path for a manifest line. */
export const encodeManifestPath = (p: string): string =>
  p.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')

/** Why a bag-relative path is unsafe, or null when it is a plain relative path. */
export const unsafeBagPath = (p: string): string | null => {
  if (p.length === 0) return 'empty path'
  if (p.includes('\u0000')) return 'NUL in path'
  if (p.startsWith('/')) return 'absolute path'
  if (p.startsWith('~')) return 'home-directory shortcut'
  if (/^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\')) return 'drive or UNC path'
  for (const s of p.split('/')) {
    if (s === '') return 'empty segment'
    if (s === '.' || s === '..') return 'dot segment'
  }
  return null
}
