/**
 * Live model calls (issue 37, point 4): `vba investigate` against a real local HTTP server that
 * answers 500 first, then a chat completion, prints a line per attempt (the status, the wait,
 * attempt n of N, the time elapsed), in text and as --json lines.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { vba, VBA_BIN } from '../helpers/cli.js'
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

progress.run()
