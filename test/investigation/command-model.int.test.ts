/**
 * A model command (commandModel) that is timed out or cancelled ends with everything it started:
 * the shell leads a process group of its own and the group is ended (killing the shell alone left
 * its children running, holding the pipes, and `vba eval` waited for them). Its failure says what
 * the command's stderr begins with, where a program names its error.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { commandModel, stderrGist, withoutSecrets } from '../../src/investigation/models.js'
import { FailureError } from '../../src/failures/error.js'
import { tempDir } from '../helpers/fs.js'

const request = (signal: AbortSignal) => ({
  prompt: 'the prompt',
  stablePrefix: '',
  turn: 1,
  phase: 'investigation' as const,
  signal
})

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits up to 3 s for `pid` to be gone; whether it is. */
const gone = async (pid: number): Promise<boolean> => {
  for (let i = 0; i < 60 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50))
  return !alive(pid)
}

/** A command that starts a long-lived child, writes its pid to `file`, and waits for it. */
const lingering = (file: string): string => `sleep 30 & echo $! > ${file}; wait`

/** The pid the command wrote (waits for the file). */
const pidIn = async (file: string): Promise<number> => {
  for (let i = 0; i < 100; i++) {
    try {
      const pid = Number(readFileSync(file, 'utf8').trim())
      if (pid > 0) return pid
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error('the command wrote no pid')
}

const failureOf = async (p: Promise<unknown>): Promise<FailureError> => {
  try {
    await p
  } catch (e) {
    if (e instanceof FailureError) return e
    throw e
  }
  throw new Error('the call answered')
}

const command = suite('model command')

command('a timeout ends what the command started, not only its shell', async () => {
  const file = path.join(tempDir('command-model'), 'pid')
  const t0 = Date.now()
  const call = commandModel(lingering(file), { timeoutMs: 600 })(request(new AbortController().signal))
  const pid = await pidIn(file)
  const f = await failureOf(call)
  assert.is(f.failure.code, 'MODEL_COMMAND_FAILED')
  assert.match(f.failure.message, 'did not answer within 600 ms')
  assert.ok(Date.now() - t0 < 10_000)
  assert.ok(await gone(pid), `the command's child ${pid} still runs after the timeout`)
})

command('a cancellation ends what the command started', async () => {
  const file = path.join(tempDir('command-model'), 'pid')
  const stop = new AbortController()
  const call = commandModel(lingering(file), { timeoutMs: 60_000 })(request(stop.signal))
  const pid = await pidIn(file)
  stop.abort()
  const f = await failureOf(call)
  assert.is(f.failure.code, 'MODEL_CALL_CANCELLED')
  assert.ok(await gone(pid), `the command's child ${pid} still runs after the cancellation`)
})

command("a failed command's message begins with what its stderr begins with", async () => {
  const stack = Array.from(
    { length: 40 },
    (_, i) => `    at frame${i} (node:internal/modules/cjs/loader:${1000 + i}:15)`
  )
  const script = ['Error: Cannot find module /nowhere/model.mjs', ...stack, 'Node.js v20'].join('\\n')
  const f = await failureOf(commandModel(`printf '${script}\\n' >&2; exit 1`)(request(new AbortController().signal)))
  assert.is(f.failure.code, 'MODEL_COMMAND_FAILED')
  assert.match(f.failure.message, 'the model command exited with 1: Error: Cannot find module /nowhere/model.mjs')
  assert.match(f.failure.message, '… Node.js v20')
  assert.not.match(f.failure.message, '\n')
  assert.ok(f.failure.message.length < 400, f.failure.message)
})

command(
  'a secret the command prints on stderr is not recorded: variables named as secrets, bearer tokens, sk- keys',
  async () => {
    const f = await failureOf(
      commandModel(
        'echo "401: key $MY_API_KEY refused (Authorization: Bearer abcdefgh12345678; sk-proj-abcdefghijklmnop1234)" >&2; exit 3',
        {
          env: { MY_API_KEY: 'supersecretvalue123' }
        }
      )(request(new AbortController().signal))
    )
    assert.match(f.failure.message, '401: key $MY_API_KEY refused (Authorization: Bearer …; sk-proj-…)')
    assert.not.match(f.failure.message, 'supersecretvalue123')
    assert.not.match(f.failure.message, 'abcdefgh12345678')
    assert.not.match(f.failure.message, 'abcdefghijklmnop1234')
    // words that only look like keys are left alone
    assert.is(withoutSecrets('task-runner failed; skipped', {}), 'task-runner failed; skipped')
  }
)

command('stderrGist: short stderr whole, on one line; a long first line cut', () => {
  assert.is(stderrGist('rate limited\n', 'rate limited\n'), 'rate limited')
  assert.is(stderrGist('a\n\nb\n', 'a\n\nb\n'), 'a | b')
  assert.is(stderrGist('', ''), '')
  const long = 'x'.repeat(500)
  assert.is(stderrGist(long, long), `${'x'.repeat(220)}… | … ${'x'.repeat(80)}`)
})

command.run()
