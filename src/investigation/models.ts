/**
 * Model functions for controllers that do not bring their own: a command run once per turn (the
 * prompt on stdin, the answer on stdout), and an OpenAI-compatible chat-completions endpoint (as
 * served by llama.cpp, vLLM, Ollama and hosted providers), with the stable prefix as the system
 * message so providers can cache it. A failure throws a coded failure; the loop records it.
 * API keys are read from the environment when the call is made and never written anywhere.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { failure, type Failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'
import type { ModelAnswer, ModelFn } from './model-fn.js'
import { MAX_ANSWER_BYTES } from './answer-provenance.js'

/** Options of {@link commandModel}. @category Models */
export interface CommandModelOptions {
  /** Kill the command after this long (default 5 minutes). */
  readonly timeoutMs?: number | undefined
  /**
   * Largest answer read, in bytes (default 1 MiB); a longer one is kept cut and rejected as too
   * large. The loop stores at most 1 MiB of any answer, whatever this says.
   */
  readonly maxAnswerBytes?: number | undefined
  /** Extra environment for the command. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Called when the command starts and when it ends (see {@link CommandModelEvent}). */
  readonly onEvent?: ((e: CommandModelEvent) => void) | undefined
}

/**
 * The run of a model command, as it happens: `started` (the program, never its arguments; its
 * process id; the time limit), then `exited` with its exit code or the signal that ended it
 * (`timed_out` when the time limit killed it), the bytes it answered and the time it took.
 * @category Models
 */
export type CommandModelEvent =
  | {
      readonly kind: 'started'
      readonly program: string
      readonly pid: number | null
      readonly turn: number
      readonly timeout_ms: number
    }
  | {
      readonly kind: 'exited'
      readonly program: string
      readonly code: number | null
      readonly signal: string | null
      readonly timed_out: boolean
      readonly answer_bytes: number
      readonly elapsed_ms: number
    }

/** A shell word assigning a variable (`KEY=value`, the value possibly quoted), with the blanks after it. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[^\s'"\\])*\s*/
/** `env` (possibly by its path) and its options, as a command line may begin. */
const ENV = /^(?:\S*\/)?env(?:\s+-\S+)*\s+/

/**
 * The program a command line runs, by name: its first word after any variable assignments (and an
 * `env` with its options), without its path. Never its arguments or the values assigned before
 * it, which may hold secrets (`API_KEY=sk-… llm` was recorded as `API_KEYsk-…`).
 */
export const programOf = (command: string): string => {
  // A program quoted whole ("/usr/local/bin/node") is its path; a word still holding an assignment
  // or a quote (`env -S 'KEY=… llm'`, `"KEY=…" llm`) is not a program's name, and may hold a
  // secret: the shell stands for it.
  const word = programWord(command).replace(/^(["'])([^"'=]*)\1$/, '$2')
  if (/[='"]/.test(word)) return 'sh'
  const base = word.split('/').pop() ?? ''
  return base.replace(/[^A-Za-z0-9._+-]/g, '').slice(0, 80) || 'sh'
}

/** The word naming the program of a command line, as written (its path included): see programOf. */
export const programWord = (command: string): string => programParts(command).word

/**
 * A command line's program word, and what comes before it: the variable assignments and an `env`
 * with its options, as written.
 */
export const programParts = (command: string): { readonly word: string; readonly before: string } => {
  let rest = command.trim()
  for (;;) {
    const m = ASSIGNMENT.exec(rest) ?? ENV.exec(rest)
    if (m === null || m[0].length === 0) break
    rest = rest.slice(m[0].length)
  }
  return { word: rest.split(/\s+/)[0] ?? '', before: command.trim().slice(0, command.trim().length - rest.length) }
}

/**
 * A model that runs `command` through the shell once per turn: the prompt on its stdin, its stdout
 * is the answer. `VBA_TURN` and `VBA_PHASE` are set for it. A non-zero exit, a signal or a timeout
 * is MODEL_COMMAND_FAILED (with the end of its stderr). An answer over `maxAnswerBytes` is an
 * answer all the same: its first `maxAnswerBytes` are kept (finish reason `length`) and the
 * deciders reject it as too large, so a model that rambles counts as an invalid answer, not as an
 * outage. Each answer records the program name and its exit status.
 */
export const commandModel =
  (command: string, options: CommandModelOptions = {}): ModelFn =>
  async ({ prompt, turn, phase, signal }) => {
    const timeoutMs = options.timeoutMs ?? 300_000
    const max = options.maxAnswerBytes ?? MAX_ANSWER_BYTES
    const program = programOf(command)
    return new Promise<ModelAnswer>((resolve, reject) => {
      // A timeout, a cancellation or an answer cut at its limit ends the shell and whatever it
      // started (killing the shell alone left them running, holding the pipes, and the caller
      // waited for them to end). The command stays in this process's group, so a signal to the
      // group (a terminal's hang-up, a supervisor's kill) still reaches it.
      const env = { ...process.env, ...options.env, VBA_TURN: String(turn), VBA_PHASE: phase }
      const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'pipe', 'pipe'], env })
      const end = (sig: NodeJS.Signals): void => {
        const started = child.pid === undefined ? [] : descendants(child.pid)
        child.kill(sig)
        for (const pid of started) {
          try {
            process.kill(pid, sig)
          } catch {
            // it has ended already
          }
        }
        child.stdout?.destroy()
        child.stderr?.destroy()
      }
      const run: RunState = { out: [], outBytes: 0, err: '', errHead: '', timedOut: false }
      if (options.onEvent !== undefined) reportRun(child, run, { program, turn, timeoutMs }, options.onEvent)
      let settled = false
      const finish = (f: () => void): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        f()
      }
      const fail = (f: Failure): void => finish(() => reject(new FailureError(f)))
      const answer = (exitStatus: 0 | null, finishReason: 'stop' | 'length'): void =>
        finish(() =>
          resolve({
            text: Buffer.concat(run.out).toString('utf8'),
            info: { kind: 'command', program, exitStatus, finishReason }
          })
        )
      const onAbort = (): void => {
        end('SIGKILL')
        fail(failure('MODEL_CALL_CANCELLED', 'the controller cancelled the model call'))
      }
      const timer = setTimeout(() => {
        run.timedOut = true
        end('SIGKILL')
        fail(
          failure('MODEL_COMMAND_FAILED', `the model command did not answer within ${timeoutMs} ms`, {
            timeout_ms: timeoutMs
          })
        )
      }, timeoutMs)
      signal.addEventListener('abort', onAbort)
      child.stdout.on('data', (d: Buffer) => {
        if (!keepAnswer(run, d, max)) {
          end('SIGKILL')
          answer(null, 'length')
        }
      })
      child.stderr.on('data', (d: Buffer) => {
        const text = d.toString('utf8')
        if (run.errHead.length < ERR_HEAD) run.errHead = (run.errHead + text).slice(0, ERR_HEAD)
        run.err = (run.err + text).slice(-2000)
      })
      child.on('error', (e) =>
        fail(
          failure(
            'MODEL_COMMAND_FAILED',
            `the model command could not run (${(e as NodeJS.ErrnoException).code ?? 'error'})`
          )
        )
      )
      child.on('close', (code, sig) => (code === 0 ? answer(0, 'stop') : fail(commandFailed(code, sig, run, env))))
      // A command that does not read its stdin must not fail the call with EPIPE.
      child.stdin.on('error', () => undefined)
      child.stdin.end(prompt)
    })
  }

/**
 * The processes `pid` started, and theirs, from /proc (Linux; none where there is no /proc): read
 * before the shell is killed, since its children are then given to init.
 */
export const descendants = (pid: number): number[] => {
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  const children = new Map<number, number[]>()
  for (const name of names) {
    if (!/^[0-9]+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1')
    } catch {
      continue // it has ended
    }
    // pid (comm) state ppid …: the name may hold spaces and parentheses, so from its last ")"
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    const list = children.get(ppid)
    if (list === undefined) children.set(ppid, [Number(name)])
    else list.push(Number(name))
  }
  const out: number[] = []
  for (let queue = [pid]; queue.length > 0; ) {
    const next: number[] = []
    for (const p of queue)
      for (const c of children.get(p) ?? [])
        if (!out.includes(c)) {
          out.push(c)
          next.push(c)
        }
    queue = next
  }
  return out
}

/** What one run of a model command has produced so far. */
interface RunState {
  readonly out: Buffer[]
  outBytes: number
  /** The last 2000 characters of its stderr, and its first ERR_HEAD. */
  err: string
  errHead: string
  timedOut: boolean
}

/** Keeps a chunk of the answer, cut at `max` bytes: false once the answer is over `max`. */
const keepAnswer = (run: RunState, d: Buffer, max: number): boolean => {
  const room = max - run.outBytes
  run.outBytes += d.length
  if (run.outBytes <= max) {
    run.out.push(d)
    return true
  }
  run.out.push(d.subarray(0, Math.max(0, room)))
  return false
}

/** Tells `onEvent` that the command started (now) and, when it closes, how it exited. */
const reportRun = (
  child: ChildProcess,
  run: RunState,
  { program, turn, timeoutMs }: { readonly program: string; readonly turn: number; readonly timeoutMs: number },
  onEvent: (e: CommandModelEvent) => void
): void => {
  const startedAt = Date.now()
  onEvent({ kind: 'started', program, pid: child.pid ?? null, turn, timeout_ms: timeoutMs })
  child.on('close', (code, sig) =>
    onEvent({
      kind: 'exited',
      program,
      code,
      signal: sig,
      timed_out: run.timedOut,
      answer_bytes: run.outBytes,
      elapsed_ms: Date.now() - startedAt
    })
  )
}

/** The characters of a command's stderr kept from its beginning (where a program says what went wrong). */
const ERR_HEAD = 1000

/**
 * A command's stderr in a failure's one-line message: its first lines (where a program names the
 * error: "Error: Cannot find module ...") and, when more followed, its last line, joined with " | ",
 * at most ~300 characters. Its end alone was a stack trace cut mid-word.
 */
export const stderrGist = (head: string, tail: string): string => {
  const lines = (t: string): string[] =>
    t
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '')
  const first = lines(head)
  const shown: string[] = []
  let size = 0
  let whole = head.length < ERR_HEAD
  for (const l of first) {
    if (size + l.length > 220) {
      if (shown.length === 0) shown.push(`${l.slice(0, 220)}…`)
      whole = false
      break
    }
    shown.push(l)
    size += l.length + 3
  }
  const last = lines(tail).pop()
  // Where it ended, when that is not shown already: the end of its last line.
  if (!whole && last !== undefined && last !== shown[shown.length - 1])
    shown.push(`… ${last.length > 80 ? last.slice(-80) : last}`)
  return shown.join(' | ')
}

/** Names of environment variables whose values are secrets (an API key, a token, a password). */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH/i

/**
 * `text` with what looks like a secret replaced: the value of every variable of `env` whose name
 * says it is one (as `$NAME`), bearer tokens and `sk-` style keys. A model command's stderr goes
 * into the case and its published report; a client that prints its key on an error would put it there.
 */
export const withoutSecrets = (text: string, env: Readonly<Record<string, string | undefined>>): string => {
  let out = text
  const values = Object.entries(env)
    .filter(([name, value]) => SECRET_NAME.test(name) && value !== undefined && value.length >= 8)
    .sort((a, b) => (b[1] ?? '').length - (a[1] ?? '').length)
  for (const [name, value] of values) out = out.replaceAll(value as string, `$${name}`)
  return out
    .replace(/\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1…')
    .replace(/\b((?:sk|pk|rk)-[A-Za-z0-9]{0,8}-?)[A-Za-z0-9_-]{12,}/g, '$1…')
}

/** MODEL_COMMAND_FAILED for a command that exited non-zero or was killed, with the gist of its stderr. */
const commandFailed = (
  code: number | null,
  sig: NodeJS.Signals | null,
  run: RunState,
  env: Readonly<Record<string, string | undefined>>
): Failure => {
  const gist = withoutSecrets(stderrGist(run.errHead, run.err), env)
  return failure(
    'MODEL_COMMAND_FAILED',
    `the model command ${sig === null ? `exited with ${String(code)}` : `was killed by ${sig}`}${gist === '' ? '' : `: ${gist}`}`,
    { exit_code: code, signal: sig }
  )
}

export { httpModel, chatCompletionsUrl, HTTP_MODEL_DEFAULTS, type HttpModelOptions } from './http-model.js'
