/**
 * A model command whose program cannot run is the operator's mistake, refused before the case is
 * touched (src/investigation/command-program.ts): at the first turn the shell exited 127 and the
 * case was blocked as a model outage after its investigation had started.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { commandProgramProblem } from '../../src/investigation/command-program.js'
import { programOf } from '../../src/investigation/models.js'
import { vba } from '../helpers/cli.js'
import { preparedDemoCase } from '../helpers/prepared-case.js'
import { tempDir } from '../helpers/fs.js'

const program = suite('model command program')

program('judged: a missing program, a file that is not executable; left to the shell: what it runs itself', () => {
  const dir = tempDir('model-program')
  const script = path.join(dir, 'model.sh')
  writeFileSync(script, '#!/bin/sh\ncat\n')
  const env = { PATH: '/usr/bin:/bin' }
  assert.is(commandProgramProblem('node model.mjs', { PATH: process.env['PATH'] ?? '' }, dir), null)
  assert.is(commandProgramProblem('FOO=1 BAR=x sh -c true', env, dir), null)
  assert.is(
    commandProgramProblem('no-such-model-xyz --answer', env, dir),
    `the model command's program "no-such-model-xyz" is not found on PATH`
  )
  assert.is(
    commandProgramProblem('TOKEN=abc no-such-model-xyz', env, dir),
    `the model command's program "no-such-model-xyz" is not found on PATH`
  )
  // After assignments (quoted values with blanks too) and an env with its options.
  assert.is(
    commandProgramProblem(`A="a b" env missing-x`, env, dir),
    `the model command's program "missing-x" is not found on PATH`
  )
  // The name the cases record: never a value assigned before the program, nor its path or arguments.
  assert.is(programOf('API_KEY=sk-123 llm --token abc'), 'llm')
  assert.is(programOf(`KEY='s k' /usr/bin/env -i /opt/bin/my-llm x`), 'my-llm')
  assert.is(programOf(`env -S 'API_KEY=sk-123 my-llm'`), 'sh')
  assert.is(programOf(`"API_KEY=sk-123" llm`), 'sh')
  // A PATH the line sets itself, or env's options, decide where the program is: left to the shell.
  for (const line of ['PATH=/opt/llm/bin:$PATH missing-x', 'env PATH=/opt/llm/bin missing-x', 'env -i missing-x'])
    assert.is(commandProgramProblem(line, env, dir), null, line)
  // A path: relative to the folder the command runs in; a file without the execute bit cannot run.
  assert.is(
    commandProgramProblem('./model.sh', env, dir),
    `the model command's program "./model.sh" is not an executable file`
  )
  chmodSync(script, 0o755)
  assert.is(commandProgramProblem('./model.sh', env, dir), null)
  assert.is(
    commandProgramProblem(`${dir} --x`, env, dir),
    `the model command's program "${dir}" is not an executable file`
  )
  // Builtins, keywords, quoting and expansions are the shell's business.
  for (const line of ['cd /tmp && missing-x', 'exec missing-x', '"missing x"', '$MODEL --run', '( missing-x )'])
    assert.is(commandProgramProblem(line, env, dir), null, line)
})

program(
  'vba investigate refuses a missing program before the case is started, for the flag and the profile',
  async () => {
    const { dir, profile } = await preparedDemoCase('', 'model-program')
    const before = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    const flag = vba(['investigate', dir, '--config', profile, '--model-command', 'no-such-model-xyz --temperature 0'])
    assert.is(flag.code, 2, flag.stderr)
    assert.match(
      flag.stderr,
      `vba: INVALID_ARGUMENT: the model command's program "no-such-model-xyz" is not found on PATH`
    )
    assert.match(flag.stderr, 'fix --model-command')
    writeFileSync(profile, `${readFileSync(profile, 'utf8')}\n[model]\ncommand = "no-such-model-xyz"\n`)
    const configured = vba(['investigate', dir, '--config', profile])
    assert.is(configured.code, 2, configured.stderr)
    assert.match(configured.stderr, 'vba: CONFIG_INVALID: ')
    assert.match(configured.stderr, 'fix [model] command in the profile')
    assert.is(
      readFileSync(path.join(dir, 'events.jsonl'), 'utf8'),
      before,
      'nothing appended: not started, not blocked'
    )
  }
)

program.run()
