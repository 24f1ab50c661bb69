/**
 * The command line on commander's own means: `--store` is one global option (listed by the verbs
 * that take it, refused by the others as before), numbers are parsed while the command line is
 * read (a bad one is refused before any file is opened), and the defaults shown are the library's.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'
import { LEASE_MS } from '../../src/adapters/case-store/store.js'
import { DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT } from '../../src/investigation/loop-options.js'

const options = suite('vba options')

options('--store is refused by a verb that does not take it, before or after the verb', () => {
  const dir = path.join(tempDir('options'), 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  for (const args of [
    ['case', 'gc', dir, '--store', 'postgres://vba@127.0.0.1:9/none'],
    ['--store', 'postgres://vba@127.0.0.1:9/none', 'case', 'gc', dir],
    ['import', 'x.tar', dir, '--store', 'postgres://vba@127.0.0.1:9/none']
  ]) {
    const r = vba(args)
    assert.is(r.code, 2, args.join(' '))
    assert.is(r.stderr, "vba: USAGE: unknown option '--store' (see vba --help)\n")
  }
})

options('a verb that takes --store gets it before or after the verb, and lists it as a global option', () => {
  for (const args of [
    ['case', 'init', 'c1', '--store', 'ftp://example.org/cases'],
    ['--store', 'ftp://example.org/cases', 'case', 'init', 'c1']
  ]) {
    const r = vba(args)
    assert.is(r.code, 2)
    assert.match(r.stderr, /^vba: STORE_INVALID: unknown store scheme ftp/)
  }
  const help = vba(['case', 'init', '--help']).stdout
  assert.match(help, /\nGlobal Options:\n {2}--store <url> /)
  assert.match(help, '$VBA_STORE')
  assert.not.match(vba(['case', 'gc', '--help']).stdout, '--store')
  assert.not.match(vba(['--help']).stdout, '--store <url>')
})

options('numbers are parsed as the command line is read: a bad one is refused before the profile is opened', () => {
  const missing = path.join(tempDir('options'), 'no-such-profile.toml')
  const cases: Array<[readonly string[], string]> = [
    [
      ['work', '--config', missing, '--lease-ms', '5'],
      `--lease-ms takes a whole number from ${LEASE_MS.min} to ${LEASE_MS.max}, got "5"`
    ],
    [
      ['work', '--config', missing, '--concurrency', '0x2'],
      '--concurrency takes a whole number from 1 to 64, got "0x2"'
    ],
    [
      ['investigate', 'c', '--config', missing, '--max-turns', '1e3'],
      `--max-turns takes a whole number from 1 to ${MAX_TURNS_LIMIT}, got "1e3"`
    ],
    [
      ['case', 'note', 'c', 'text', '--expect-generation', '-1'],
      '--expect-generation takes a whole number of 0 or more, got "-1"'
    ],
    [['index', 'prune', '--config', missing, '--older-than', 'soon'], '--older-than takes a number of days, got "soon"']
  ]
  for (const [args, message] of cases) {
    const r = vba(args)
    assert.is(r.code, 2, args.join(' '))
    assert.is(r.stderr, `vba: INVALID_ARGUMENT: ${message}\n`)
  }
})

options('the defaults the help shows are the library’s', () => {
  const work = vba(['work', '--help']).stdout.replace(/\s+/g, ' ')
  assert.match(work, `renewed every third of it (default: ${LEASE_MS.default})`)
  assert.match(work, `model turns per claim (default: ${DEFAULT_MAX_TURNS})`)
  assert.match(vba(['investigate', '--help']).stdout, `(default: ${DEFAULT_MAX_TURNS})`)
  assert.match(vba(['queue', 'claim', '--help']).stdout, '(default: 300000)')
  assert.match(vba(['serve', '--help']).stdout, '(default: 8080)')
})

options.run()
