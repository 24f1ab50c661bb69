/**
 * readNamedFile, the reader of files a person names (a command-line option's file, a profile and
 * its includes, a key, trust or password file): bounded whatever the file says its size is, a
 * device, directory or (unless pipes are taken) FIFO refused before a byte is read and without
 * waiting, a pipe read up to the bound, a link on the path followed, refusals in the caller's code
 * and never holding the file's bytes.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, execFileSync } from 'node:child_process'
import { symlinkSync, truncateSync, writeFileSync, mkdirSync } from 'node:fs'
import * as path from 'node:path'
import { readNamedFile } from '../../src/adapters/regular-file.js'
import { resolvePassword } from '../../src/adapters/db/db-errors.js'
import type { DatabaseSection } from '../../src/adapters/config/profile.js'
import { FailureError } from '../../src/failures/error.js'
import { tempDir } from '../helpers/fs.js'

const test = suite('readNamedFile')
const root = tempDir('named-file')

/** The failure `work` is refused with (fails the test when it is not refused with one). */
const refusal = async (work: Promise<unknown>): Promise<FailureError['failure']> => {
  try {
    await work
  } catch (e) {
    if (e instanceof FailureError) return e.failure
    throw e
  }
  throw new Error('not refused')
}

const fifo = (name: string): string => {
  const file = path.join(root, name)
  execFileSync('mkfifo', [file])
  return file
}

test('a regular file within the bound is read; a link on the path is followed', async () => {
  const file = path.join(root, 'small.txt')
  writeFileSync(file, 'hello')
  assert.is((await readNamedFile(file, { maxBytes: 5 })).toString(), 'hello')
  const link = path.join(root, 'link.txt')
  symlinkSync(file, link)
  assert.is((await readNamedFile(link, { maxBytes: 5 })).toString(), 'hello')
})

test('a file over the bound is refused by its size, unread (a sparse 8 GiB file costs nothing)', async () => {
  const file = path.join(root, 'huge.bin')
  writeFileSync(file, '')
  truncateSync(file, 8 * 2 ** 30)
  const f = await refusal(readNamedFile(file, { maxBytes: 1 << 20, code: 'QUERY_INVALID' }))
  assert.is(f.code, 'QUERY_INVALID')
  assert.is(f.data['cause'], 'FILE_TOO_LARGE')
  assert.match(f.message, `${file} has ${8 * 2 ** 30} bytes, more than the 1048576 allowed`)
})

test('/dev/zero, a directory and a FIFO are refused at once without the pipe option', async () => {
  const zero = await refusal(readNamedFile('/dev/zero', { maxBytes: 1024, pipe: true, code: 'CONFIG_INVALID' }))
  assert.is(zero.code, 'CONFIG_INVALID')
  assert.is(zero.data['cause'], 'FILE_NOT_REGULAR')
  assert.match(zero.message, '/dev/zero is a character device, not a regular file')
  const dir = path.join(root, 'a-dir')
  mkdirSync(dir)
  assert.match((await refusal(readNamedFile(dir, { maxBytes: 1024 }))).message, 'is a directory')
  // No writer: a blocking open would wait for ever.
  const f = await refusal(readNamedFile(fifo('no-writer'), { maxBytes: 1024, code: 'INVALID_ARGUMENT' }))
  assert.is(f.code, 'INVALID_ARGUMENT')
  assert.match(f.message, 'is a FIFO, not a regular file')
})

test('a file whose size says 0 (/proc) is read up to the bound, not trusted to be empty', async () => {
  const environ = await readNamedFile('/proc/self/environ', { maxBytes: 1 << 20 })
  assert.ok(environ.length > 0)
  const f = await refusal(readNamedFile('/proc/self/environ', { maxBytes: 4 }))
  assert.is(f.code, 'FILE_TOO_LARGE')
  assert.match(f.message, 'holds more than the 4 bytes allowed')
})

test('with pipe, a FIFO is read to its end, and refused once it gives more than the bound', async () => {
  const writeTo = (file: string, command: string) =>
    new Promise<void>((resolve) => spawn('sh', ['-c', `${command} > "${file}"`]).once('exit', () => resolve()))
  const ok = fifo('pipe-ok')
  const wrote = writeTo(ok, 'printf "%s" "{\\"a\\":1}"')
  assert.is((await readNamedFile(ok, { maxBytes: 7, pipe: true })).toString(), '{"a":1}')
  await wrote
  const endless = fifo('pipe-endless')
  const writer = writeTo(endless, 'cat /dev/zero')
  const f = await refusal(readNamedFile(endless, { maxBytes: 100_000, pipe: true, code: 'INPUT_INVALID' }))
  assert.is(f.code, 'INPUT_INVALID')
  assert.is(f.data['cause'], 'FILE_TOO_LARGE')
  assert.match(f.message, 'holds more than the 100000 bytes allowed')
  await writer // cat ends on SIGPIPE once the reader is gone
})

test('a refusal never holds the bytes of the file', async () => {
  const file = path.join(root, 'secret.txt')
  writeFileSync(file, 'db_password=hunter2')
  const f = await refusal(readNamedFile(file, { maxBytes: 4 }))
  assert.not.match(JSON.stringify(f), 'hunter2')
  assert.not.match(JSON.stringify(f), 'db_pass')
})

test("a profile's password_file is read up to 64 KiB, a regular file only: /dev/zero or a FIFO is CONFIG_INVALID", async () => {
  const db = (file: string) => ({ password_file: file }) as unknown as DatabaseSection
  const file = path.join(root, 'password')
  writeFileSync(file, 's3cret\n')
  assert.is(await resolvePassword(db(file), {}), 's3cret')
  for (const bad of ['/dev/zero', fifo('password-fifo')]) {
    const f = await refusal(resolvePassword(db(bad), {}))
    assert.is(f.code, 'CONFIG_INVALID')
    assert.match(f.message, `password_file ${bad} is a`)
  }
})

test.run()
