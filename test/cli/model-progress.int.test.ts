/**
 * Live model calls (issue 37, point 4): `vba investigate` against a real local HTTP server that
 * answers 500 first, then a chat completion, prints a line per attempt (the status, the wait,
 * attempt n of N, the time elapsed), in text and as --json lines; a model command's start, its
 * heartbeat while it runs and its exit; meanwhile `vba status`, `vba verify` and `vba serve` say a
 * process advances the case (who, since when), and a killed run is told as gone.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { startServe, vba, VBA_BIN } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

const ANSWERS = [
  { interpretation: { summary: 'Netted wolpertingers despawn.' } },
  { next: { kind: 'conclusion', summary: 'Needs a lab test.', hypotheses: [], evidence: [] } }
]

/** An endpoint whose every odd request fails with HTTP 500; even ones answer the next scripted answer. */
const chaosEndpoint = async (): Promise<{ url: string; close: () => void }> => {
  let requests = 0
  let answered = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      requests++
      if (requests % 2 === 1) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"overloaded"}}')
        return
      }
      const content = JSON.stringify(ANSWERS[Math.min(answered++, ANSWERS.length - 1)])
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `c${requests}`,
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }]
        })
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() }
}

const vbaAsync = (args: string[]): Promise<{ code: number; stdout: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [VBA_BIN, ...args])
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.on('close', (code) => resolve({ code: code ?? -1, stdout }))
  })

const progress = suite('live model calls')

progress(
  'a line per attempt: HTTP 500, the wait, attempt n of N, elapsed; then answered (text and --json)',
  async () => {
    for (const json of [false, true]) {
      const root = tempDir('model-progress')
      const world = await writeDemoWorld(path.join(root, 'world'))
      const dir = path.join(root, 'case')
      assert.is(vba(['case', 'init', dir]).code, 0)
      writeFileSync(path.join(root, 'r.json'), JSON.stringify({ report: 'Wolpertingers vanish.', entities: [] }))
      assert.is(vba(['case', 'prepare', dir, '--config', world.profile, '--input', path.join(root, 'r.json')]).code, 0)
      const endpoint = await chaosEndpoint()
      try {
        const args = ['investigate', dir, '--config', world.profile, '--model-url', endpoint.url, '--model', 'm']
        const r = await vbaAsync(json ? [...args, '--json'] : args)
        assert.is(r.code, 0, r.stdout)
        if (!json) {
          assert.match(
            r.stdout,
            /model attempt 1 of 5: HTTP 500 \(MODEL_HTTP_ERROR: .*overloaded.*\) after \d+\.\d s; attempt 2 in \d+\.\d s/
          )
          assert.match(r.stdout, /model attempt 2 of 5: answered after \d+\.\d s/)
        } else {
          const lines = r.stdout
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as { model_attempt?: { kind: string; status?: number } })
          const failed = lines.find((l) => l.model_attempt?.kind === 'failed')
          assert.is(failed?.model_attempt?.status, 500)
          assert.ok(lines.some((l) => l.model_attempt?.kind === 'answered'))
        }
      } finally {
        endpoint.close()
      }
    }
  }
)

/** A model command that answers only once the file GO exists (the test creates it when it has seen enough), or fails after a minute. */
const gatedModel = (root: string): string => {
  const file = path.join(root, 'gated-model.mjs')
  const answers = JSON.stringify(ANSWERS.map((a) => JSON.stringify(a)))
  writeFileSync(
    file,
    `import { existsSync } from 'node:fs'
for await (const _ of process.stdin);
const until = Date.now() + 60000
while (!existsSync(process.env.GO)) {
  if (Date.now() > until) process.exit(1)
  await new Promise((r) => setTimeout(r, 50))
}
process.stdout.write(${answers}[Math.min(Number(process.env.VBA_TURN), 2) - 1])
`
  )
  return `node ${JSON.stringify(file)}`
}

/** Runs vba ARGS until `until(stdout)` holds, then calls `then`; resolves with the whole run. */
const runUntil = (
  args: string[],
  env: Record<string, string>,
  until: (stdout: string) => boolean,
  then: (pid: number) => Promise<void>
): Promise<{ code: number | null; signal: string | null; stdout: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VBA_BIN, ...args], {
      env: { ...process.env, ...env }
    })
    let stdout = ''
    let fired = false
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
      if (!fired && until(stdout)) {
        fired = true
        then(child.pid ?? 0).catch((e: unknown) => {
          child.kill('SIGKILL')
          reject(e)
        })
      }
    })
    child.on('close', (code, signal) => resolve({ code, signal, stdout }))
  })

/** A prepared demo case whose profile beats every 100 ms. */
const preparedCase = async (name: string): Promise<{ root: string; dir: string; profile: string }> => {
  const root = tempDir(name)
  const world = await writeDemoWorld(path.join(root, 'world'))
  const profile = path.join(root, 'world', 'beat.toml')
  writeFileSync(
    profile,
    readFileSync(world.profile, 'utf8').replace('[budget]', '[model]\nheartbeat_ms = 100\n\n[budget]')
  )
  const dir = path.join(root, 'cases', 'c1')
  assert.is(vba(['case', 'init', dir]).code, 0)
  writeFileSync(path.join(root, 'r.json'), JSON.stringify({ report: 'Wolpertingers vanish.', entities: [] }))
  assert.is(vba(['case', 'prepare', dir, '--config', profile, '--input', path.join(root, 'r.json')]).code, 0)
  return { root, dir, profile }
}

progress(
  'a model command: started, a heartbeat while it runs, its exit; status, verify and serve name the process meanwhile; nothing after',
  async () => {
    const { root, dir, profile } = await preparedCase('model-command-progress')
    const go = path.join(root, 'go')
    const args = ['investigate', dir, '--config', profile, '--model-command', gatedModel(root)]
    const r = await runUntil(
      args,
      { GO: go },
      (out) => out.includes('running, no answer yet'),
      async (pid) => {
        const status = vba(['status', dir])
        assert.match(
          status.stdout,
          new RegExp(`being advanced by vba investigate \\(pid ${pid} on \\S+\\) since \\d{4}-`)
        )
        const run = (JSON.parse(vba(['status', dir, '--json']).stdout) as { run: { by: string } | null }).run
        assert.match(run?.by ?? '', `vba investigate (pid ${pid} on `)
        const v = vba(['verify', dir])
        assert.is(v.code, 0, v.stdout)
        assert.match(v.stdout, 'notice RUN_PRESENT (.vba-run): a process advances the case')
        const { child, base } = await startServe([path.dirname(dir)])
        try {
          const page = await (await fetch(base)).text()
          assert.match(page, `waits: being advanced by vba investigate (pid ${pid} on `)
          assert.not.match(page, 'runnable: the model is next')
        } finally {
          child.kill()
        }
        // A second run on this host is refused before it does anything: the first keeps the case.
        const second = vba(['investigate', dir, '--config', profile, '--model-command', gatedModel(root)])
        assert.is(second.code, 4, second.stdout + second.stderr)
        assert.match(
          second.stderr,
          new RegExp(`^vba: CASE_LOCKED: vba investigate \\(pid ${pid} on this host\\) advances the case since `)
        )
        assert.match(vba(['status', dir]).stdout, `being advanced by vba investigate (pid ${pid} on `)
        writeFileSync(go, '')
      }
    )
    assert.is(r.code, 0, r.stdout)
    assert.match(r.stdout, /model command node started \(turn 1, pid \d+, time limit 300\.0 s\)/)
    assert.match(r.stdout, /model command node: running, no answer yet \(\d+\.\d s\)/)
    assert.match(r.stdout, /model command node exited with 0 after \d+\.\d s \(\d+ bytes on stdout\)/)
    assert.ok(
      r.stdout.indexOf('model command node exited') < r.stdout.indexOf('turn 1 (interpretation'),
      'the exit is told before the turn'
    )
    assert.not.ok(existsSync(path.join(dir, '.vba-run')), 'the marker is removed at the end')
    assert.not.match(vba(['status', dir]).stdout, 'being advanced')
    const json = await vbaAsync([...args, '--json'])
    assert.is(json.code, 0, json.stdout)
  }
)

progress('--json: the command as model_command lines; a killed run is told as gone by status', async () => {
  const { root, dir, profile } = await preparedCase('model-command-killed')
  const args = ['investigate', dir, '--config', profile, '--model-command', gatedModel(root), '--json']
  const go = path.join(root, 'go')
  const r = await runUntil(
    args,
    { GO: go },
    (out) => out.includes('"model_waiting"'),
    async (pid) => {
      process.kill(pid, 'SIGKILL')
    }
  )
  writeFileSync(go, '') // the orphaned model command ends too
  assert.is(r.signal, 'SIGKILL')
  const lines = r.stdout
    .trim()
    .split('\n')
    .map(
      (l) => JSON.parse(l) as { model_command?: { kind: string; program: string }; model_waiting?: { command: string } }
    )
  assert.equal(lines.find((l) => l.model_command !== undefined)?.model_command?.kind, 'started')
  assert.is(lines.find((l) => l.model_waiting !== undefined)?.model_waiting?.command, 'node')
  assert.match(
    vba(['status', dir]).stdout,
    /vba investigate \(pid \d+ on \S+\) advanced it from \S+ and is gone without finishing/
  )
})

progress.run()
