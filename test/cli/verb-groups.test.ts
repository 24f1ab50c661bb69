/**
 * A command line builds only the group of the verb it names (src/cli/program.ts VERB_GROUPS): each
 * group lists exactly the verbs it adds, and every verb's help (and its subcommands' help) and
 * usage errors are the same whether only its group or the whole program was built.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Command } from 'commander'
import { buildProgram, VERB_GROUPS } from '../../src/cli/program.js'
import { groupsFor, verbOf } from '../../src/cli/verb-build.js'

const groups = suite('verb groups')

/** What a program prints (stdout and stderr, in order) for a command line, and how it ended. */
const outcome = async (
  make: (io: { out: (s: string) => void; err: (s: string) => void }) => Command,
  argv: string[]
) => {
  const lines: string[] = []
  const program = make({ out: (s) => lines.push(`out ${s}`), err: (s) => lines.push(`err ${s}`) })
  let ended = 'ok'
  try {
    await program.parseAsync(argv, { from: 'user' })
  } catch (e) {
    ended = (e as { code?: string }).code ?? String(e)
  }
  return `${lines.join('\n')}\n${ended}`
}

groups('each group adds exactly the verbs it lists, in the order of the whole program', () => {
  const all = buildProgram({ out: () => undefined, err: () => undefined }).commands.map((c) => c.name())
  assert.equal(
    all.filter((n) => n !== 'help'),
    VERB_GROUPS.flatMap((g) => g.verbs)
  )
  for (const g of VERB_GROUPS) {
    const one = buildProgram({ out: () => undefined, err: () => undefined }, [g.verbs[0] ?? ''])
    assert.equal(
      one.commands.map((c) => c.name()),
      g.verbs,
      g.verbs.join(' ')
    )
  }
})

groups('the verb of a command line skips the options before it and their values', () => {
  assert.is(verbOf(['research', '--config', 'p.toml']), 'research')
  assert.is(verbOf(['--store', 'postgres://x/y', 'case', 'init', 'c']), 'case')
  assert.is(verbOf(['--sign-key', 'k', '--sign-principal', 'research', 'head', 'c']), 'head')
  assert.is(verbOf(['--store=postgres://x/y', 'show', 'c']), 'show')
  assert.is(verbOf(['--help']), undefined)
  assert.is(groupsFor(VERB_GROUPS, ['--help']).length, VERB_GROUPS.length)
  assert.is(groupsFor(VERB_GROUPS, ['help', 'research']).length, VERB_GROUPS.length)
  assert.is(groupsFor(VERB_GROUPS, ['reserch']).length, VERB_GROUPS.length)
  assert.is(groupsFor(VERB_GROUPS, ['research']).length, 1)
})

groups('every verb prints the same help and usage errors from its group as from the whole program', async () => {
  const whole = buildProgram({ out: () => undefined, err: () => undefined })
  const lines: string[][] = []
  const visit = (c: Command, path: string[]): void => {
    for (const sub of c.commands) {
      if (sub.name() === 'help') continue
      lines.push([...path, sub.name()])
      visit(sub, [...path, sub.name()])
    }
  }
  visit(whole, [])
  assert.ok(lines.length > 40, `${lines.length} verbs`)
  for (const verb of lines) {
    for (const argv of [
      [...verb, '--help'],
      [...verb, '--no-such-option'],
      ['--store', 'postgres://vba@127.0.0.1:9/none', ...verb, '--help']
    ]) {
      const all = await outcome((io) => buildProgram(io), argv)
      const own = await outcome((io) => buildProgram(io, argv), argv)
      assert.is(own, all, argv.join(' '))
    }
  }
})

groups.run()
