/**
 * Hand-written tar archives for hostile-input tests: any name bytes, any type flag, any size field
 * and any body, which tar-stream's packer would not produce (a symlink with a body, a name that is
 * not UTF-8, an entry cut off in its middle).
 */
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs'

export interface RawEntry {
  /** The name field (at most 100 bytes). */
  readonly name: string | Buffer
  /** The type flag: '0' file, '1' hard link, '2' symlink, '3' char device, '5' directory, '6' FIFO. */
  readonly type?: string
  /** The body (padded to 512 bytes). */
  readonly body?: Buffer | string
  /** The size field, when it should differ from the body's length. */
  readonly size?: number
  readonly linkname?: string
}

const octal = (n: number, width: number): string => `${n.toString(8).padStart(width - 1, '0')}\0`

/** One 512-byte ustar header with a correct checksum. */
export const tarHeader = (e: { name: string | Buffer; type: string; size: number; linkname?: string }): Buffer => {
  const h = Buffer.alloc(512)
  const name = typeof e.name === 'string' ? Buffer.from(e.name) : e.name
  name.copy(h, 0, 0, Math.min(100, name.length))
  h.write(octal(0o644, 8), 100, 'ascii')
  h.write(octal(0, 8), 108, 'ascii')
  h.write(octal(0, 8), 116, 'ascii')
  h.write(octal(e.size, 12), 124, 'ascii')
  h.write(octal(0, 12), 136, 'ascii')
  h.write('        ', 148, 'ascii')
  h.write(e.type, 156, 'ascii')
  if (e.linkname !== undefined) h.write(e.linkname, 157, 'utf8')
  h.write('ustar\u0000', 257, 'ascii')
  h.write('00', 263, 'ascii')
  let sum = 0
  for (const b of h) sum += b
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii')
  return h
}

const pad = (n: number): Buffer => Buffer.alloc((512 - (n % 512)) % 512)

/** A tar of `entries`, ending with two zero blocks unless `cut` says where to stop (in bytes). */
export const rawTar = (entries: readonly RawEntry[], options: { cut?: number } = {}): Buffer => {
  const parts: Buffer[] = []
  for (const e of entries) {
    const body = e.body === undefined ? Buffer.alloc(0) : Buffer.from(e.body)
    parts.push(
      tarHeader({
        name: e.name,
        type: e.type ?? '0',
        size: e.size ?? body.length,
        ...(e.linkname === undefined ? {} : { linkname: e.linkname })
      }),
      body,
      pad(body.length)
    )
  }
  parts.push(Buffer.alloc(1024))
  const all = Buffer.concat(parts)
  return options.cut === undefined ? all : all.subarray(0, options.cut)
}

/**
 * Writes a tar holding one file entry `name` of `size` zero bytes without holding it in memory:
 * the body is a hole made by extending the file (sparse on most file systems).
 */
export const sparseTar = (file: string, name: string, size: number): void => {
  const fd = openSync(file, 'w')
  try {
    writeSync(fd, tarHeader({ name, type: '0', size }), 0, 512, 0)
    const end = 512 + size + ((512 - (size % 512)) % 512)
    ftruncateSync(fd, end + 1024)
  } finally {
    closeSync(fd)
  }
}
