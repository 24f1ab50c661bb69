/**
 * `vba investigate` on the demo world: driven by a scripted model program (--model-command) and
 * by a real local HTTP server speaking the OpenAI-compatible chat-completions protocol with
 * scripted answers (--model-url). The key comes from the environment variable the profile names
 * and appears nowhere else.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer, type IncomingMessage } from 'node:http'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import * as path from 'node:path'
import { spawn } from 'node:child_process'
import { vba, VBA_BIN } from '../helpers/cli.js'
import { preparedDemoCase } from '../helpers/prepared-case.js'

const MODEL_PROGRAM = `let prompt = ''
for await (const c of process.stdin) prompt += c
const turn = Number(process.env.VBA_TURN)
const latest = /Latest result (E\\d+)/.exec(prompt)?.[1]
const answers = [
  { interpretation: { summary: 'Netted wolpertingers despawn without giving the item.' } },
  { next: { kind: 'tool', operation: 'project.query', arguments: { kind: 'source.context', text: '23487', path_prefix: 'src/server/' } } },
  { next: { kind: 'hypothesis', action: 'propose', statement: 'The script despawns the creature first.', evidence: [latest] } },
  { next: { kind: 'conclusion', summary: 'Despawn races the reward.', hypotheses: ['H1'], evidence: [latest] } }
]
process.stdout.write(JSON.stringify(answers[turn - 1] ?? answers[3]))
`

const prepared = preparedDemoCase

/** `vba` asynchronously (the HTTP server runs in this process). */
const vbaAsync = (
  args: string[],
  env: Record<string, string> = {}
): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [VBA_BIN, ...args], {
      env: { ...process.env, ...env }
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

const allFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n)
    return statSync(p).isDirectory() ? allFiles(p) : [p]
  })

const investigate = suite('vba investigate')

investigate('--model-command drives the demo case to CONCLUDED, one line per step; the case verifies', async () => {
  const { dir, profile, root } = await prepared()
  writeFileSync(path.join(root, 'model.mjs'), MODEL_PROGRAM)
  const r = vba([
    'investigate',
    dir,
    '--config',
    profile,
    '--model-command',
    `node ${JSON.stringify(path.join(root, 'model.mjs'))}`
  ])
  assert.is(r.code, 0, r.stdout + r.stderr)
  assert.match(r.stdout, 'started the investigation')
  assert.match(r.stdout, 'turn 1 (interpretation, prompt')
  assert.match(r.stdout, 'interpretation recorded')
  assert.match(r.stdout, 'turn 2 (investigation, prompt')
  assert.match(r.stdout, /plan P2: source.context "23487" under src\/server\//)
  assert.match(r.stdout, /research P2 source.context: E\d+/)
  assert.match(r.stdout, 'hypothesis H1 proposed')
  assert.match(
    r.stdout,
    /CONCLUDED: this run 4 model turns, 0 tokens; the case 4 turns, 0 tokens, generation \d+, receipt \d+:sha256:/
  )
  assert.is(vba(['verify', dir]).code, 0)
  const status = JSON.parse(vba(['status', dir, '--json']).stdout) as { state: string; conclusion: { summary: string } }
  assert.is(status.state, 'CONCLUDED')
  assert.is(status.conclusion.summary, 'Despawn races the reward.')
})

investigate(
  'a failing model command is recorded; the case waits as MODEL_UNAVAILABLE (exit 3: the provider is unavailable); --json lines say why',
  async () => {
    const { dir, profile } = await prepared()
    const r = vba([
      'investigate',
      dir,
      '--config',
      profile,
      '--model-command',
      'echo "rate limited" >&2; exit 7',
      '--json'
    ])
    assert.is(r.code, 3, r.stderr)
    const lines = r.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            step?: { outcome: string }
            result?: { state: string; reason: string; last_model_failure: { code: string; message: string } | null }
          }
      )
    assert.match(
      lines.find((l) => l.step !== undefined)?.step?.outcome ?? '',
      'model call failed: MODEL_COMMAND_FAILED: the model command exited with 7: rate limited'
    )
    assert.equal(lines[lines.length - 1]?.result?.state, 'BLOCKED')
    assert.equal(lines[lines.length - 1]?.result?.reason, 'MODEL_UNAVAILABLE')
    assert.equal(lines[lines.length - 1]?.result?.last_model_failure?.code, 'MODEL_COMMAND_FAILED')
    const status = vba(['status', dir])
    assert.match(status.stdout, 'the model failed: MODEL_COMMAND_FAILED: the model command exited with 7: rate limited')
    const events = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    assert.match(events, 'exited with 7: rate limited')
  }
)

investigate('bad flags are input errors (exit 2)', async () => {
  const { dir, profile } = await prepared()
  for (const args of [
    [],
    ['--model-url', 'not a url', '--model', 'm'],
    ['--model-url', 'http://127.0.0.1:9/v1'],
    ['--model-command', 'x', '--model-url', 'http://x/v1', '--model', 'm'],
    ['--model-command', 'x', '--max-turns', '0']
  ]) {
    const r = vba(['investigate', dir, '--config', profile, ...args])
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, 'INVALID_ARGUMENT')
  }
})

investigate(
  'model text with terminal controls and bidi reaches the terminal as codes: step lines, status, findings (issue 23, point 9)',
  async () => {
    const { dir, profile, root } = await prepared()
    // Clear the screen, ring the bell, move back, reverse the line: all from the model's answers.
    const HOSTILE = 'a\u001b[2J\u0007\b\u202Edlrow\u200B\u009b31m'
    writeFileSync(
      path.join(root, 'model.mjs'),
      `let prompt = ''
for await (const c of process.stdin) prompt += c
const turn = Number(process.env.VBA_TURN)
const latest = /Latest result (E\\d+)/.exec(prompt)?.[1]
const hostile = ${JSON.stringify(HOSTILE)}
const answers = [
  { interpretation: { summary: 'netted wolpertingers vanish ' + hostile } },
  { next: { kind: 'tool', operation: 'project.query', arguments: { kind: 'source.search', text: 'NPC_' + hostile } } },
  { next: { kind: 'hypothesis', action: 'propose', statement: 'despawn first ' + hostile, evidence: [latest] } },
  { next: { kind: 'conclusion', summary: 'races ' + hostile, hypotheses: ['H1'], evidence: [latest] } }
]
process.stdout.write(JSON.stringify(answers[turn - 1] ?? answers[3]))
`
    )
    const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e\u200b]/
    const r = vba([
      'investigate',
      dir,
      '--config',
      profile,
      '--model-command',
      `node ${JSON.stringify(path.join(root, 'model.mjs'))}`
    ])
    assert.is(r.code, 0, r.stdout + r.stderr)
    // The plan line quotes the request as JSON (C0 controls escaped by JSON); the rest as codes.
    assert.match(r.stdout, 'source.search "NPC_a\\u001b[2J\\u0007\\b<U+202E>dlrow<U+200B><U+009B>31m"')
    assert.not.match(r.stdout, raw, 'no raw control or bidi character in the step lines')
    const status = vba(['status', dir])
    assert.is(status.code, 0)
    assert.match(
      status.stdout,
      'hypothesis H1 [open]: despawn first a<U+001B>[2J<U+0007><U+0008><U+202E>dlrow<U+200B><U+009B>31m'
    )
    assert.match(status.stdout, 'conclusion: races a<U+001B>')
    assert.not.match(status.stdout, raw)
    // The same text in a finding (a forged note line) is shown as codes by verify.
    writeFileSync(path.join(dir, `evil\u001b[2J\u202e.txt`), 'x')
    const v = vba(['verify', dir])
    assert.is(v.code, 1)
    assert.match(v.stdout, 'evil<U+001B>[2J<U+202E>.txt')
    assert.not.match(v.stdout, raw)
  }
)

investigate.run()

const http = suite('vba investigate --model-url (OpenAI-compatible chat completions)')

interface Seen {
  readonly authorization: string | undefined
  readonly body: { model: string; messages: Array<{ role: string; content: string }>; temperature: number }
}

/** A real HTTP server with scripted answers; `fail` answers HTTP 500 instead. */
const server = async (
  answers: string[],
  fail = false
): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> => {
  const seen: Seen[] = []
  const read = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
      let s = ''
      req.on('data', (d: Buffer) => {
        s += d.toString()
      })
      req.on('end', () => resolve(s))
    })
  const srv = createServer((req, res) => {
    void read(req).then((text) => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end()
        return
      }
      seen.push({ authorization: req.headers.authorization, body: JSON.parse(text) as Seen['body'] })
      if (fail) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"model overloaded"}}')
        return
      }
      const content = answers[Math.min(seen.length, answers.length) - 1] ?? ''
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `c${seen.length}`,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }]
        })
      )
    })
  })
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()))
  const port = (srv.address() as AddressInfo).port
  return { url: `http://127.0.0.1:${port}/v1`, seen, close: () => new Promise((resolve) => srv.close(() => resolve())) }
}

const KEY = 'sk-test-0123456789abcdef-never-stored'
const ANSWERS = [
  JSON.stringify({ interpretation: { summary: 'Netted wolpertingers despawn.' } }),
  JSON.stringify({
    next: { kind: 'conclusion', summary: 'The despawn races the reward.', hypotheses: [], evidence: [] }
  })
]

http(
  'the stable prefix is the system message, the key comes from the named variable, and it is stored nowhere',
  async () => {
    const { dir, profile } = await prepared('\n[model]\napi_key_env = "VBA_TEST_MODEL_KEY"\n')
    const s = await server(ANSWERS)
    try {
      const r = await vbaAsync(
        ['investigate', dir, '--config', profile, '--model-url', s.url, '--model', 'test-model'],
        { VBA_TEST_MODEL_KEY: KEY }
      )
      assert.is(r.code, 0, r.stdout + r.stderr)
      assert.match(r.stdout, 'CONCLUDED')
      assert.is(s.seen.length, 2)
      for (const req of s.seen) {
        assert.is(req.authorization, `Bearer ${KEY}`)
        assert.is(req.body.model, 'test-model')
        assert.is(req.body.temperature, 0)
        assert.is(req.body.messages[0]?.role, 'system')
        assert.match(
          req.body.messages[0]?.content ?? '',
          /^=== investigation_project_v2 ===[\s\S]*=== end of contract ===$/
        )
        assert.is(req.body.messages[1]?.role, 'user')
        assert.match(req.body.messages[1]?.content ?? '', /^=== case ===/)
      }
      assert.is(
        s.seen[0]?.body.messages[0]?.content,
        s.seen[1]?.body.messages[0]?.content,
        'the system message is byte-identical across turns (cacheable)'
      )
      for (const f of allFiles(dir)) assert.not.ok(readFileSync(f).includes(KEY), `the key is in ${f}`)
      assert.not.ok(r.stdout.includes(KEY) || r.stderr.includes(KEY))
    } finally {
      await s.close()
    }
  }
)

http(
  "an HTTP error is retried, then recorded as a failed model call (exit 3, MODEL_UNAVAILABLE, the status and the provider's text shown); a missing key or an unreachable endpoint is refused before the case is touched",
  async () => {
    const { dir, profile } = await prepared('\n[model]\napi_key_env = "VBA_TEST_MODEL_KEY"\nmax_attempts = 3\n')
    const s = await server(ANSWERS, true)
    try {
      const r = await vbaAsync(
        ['investigate', dir, '--config', profile, '--model-url', s.url, '--model', 'test-model'],
        { VBA_TEST_MODEL_KEY: KEY }
      )
      assert.is(r.code, 3, r.stdout + r.stderr)
      assert.match(r.stdout, 'BLOCKED / MODEL_UNAVAILABLE')
      assert.match(
        r.stdout,
        /model call failed: MODEL_HTTP_ERROR: the model endpoint http:\/\/127\.0\.0\.1:\d+ answered HTTP 500/
      )
      assert.is(s.seen.length, 3, 'a 500 is retried up to max_attempts')
      assert.match(readFileSync(path.join(dir, 'events.jsonl'), 'utf8'), 'HTTP 500')
      // A key that is not set is the operator's mistake, said before the case is touched.
      const log = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
      const missing = await vbaAsync(
        ['investigate', dir, '--config', profile, '--model-url', s.url, '--model', 'test-model', '--manual-retry'],
        { VBA_TEST_MODEL_KEY: '' }
      )
      assert.is(missing.code, 2, missing.stdout + missing.stderr)
      assert.match(
        missing.stderr,
        'vba: CONFIG_INVALID: [model] api_key_env names VBA_TEST_MODEL_KEY, which is not set'
      )
      assert.is(s.seen.length, 3, 'without the key nothing is sent')
      assert.is(readFileSync(path.join(dir, 'events.jsonl'), 'utf8'), log, 'nothing recorded')
      // An endpoint that could never be reached: refused before the case is touched, the URL not echoed.
      for (const [url, words] of [
        ['htp://127.0.0.1:1/v1', 'is not an http or https URL'],
        ['http://user:sk-SECRET@127.0.0.1:1/v1', 'holds credentials'],
        ['not a url', 'is not a URL']
      ] as const) {
        const bad = await vbaAsync(['investigate', dir, '--config', profile, '--model-url', url, '--model', 'm'], {
          VBA_TEST_MODEL_KEY: KEY
        })
        assert.is(bad.code, 2, bad.stdout + bad.stderr)
        assert.match(bad.stderr, `vba: INVALID_ARGUMENT: --model-url ${words}`)
        assert.not.match(bad.stderr, 'SECRET')
      }
      assert.is(readFileSync(path.join(dir, 'events.jsonl'), 'utf8'), log, 'nothing recorded')
    } finally {
      await s.close()
    }
  }
)

http.run()
