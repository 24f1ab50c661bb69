/**
 * The OpenAI-compatible model client against a real local HTTP endpoint that answers like a
 * provider and misbehaves on demand: provenance of every answer, retries of 429 / 5xx / garbage /
 * hangs / resets with Retry-After honoured and bounded, errors people can act on (status and the
 * provider's text, never the key), the controller's abort, and the public adapter's VbaError.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { httpModel as internalHttpModel } from '../../src/investigation/http-model.js'
import { httpModel, VbaError } from '../../src/index.js'
import { FailureError } from '../../src/failures/error.js'
import type { ModelAnswer, ModelFn } from '../../src/investigation/model-fn.js'
import { startModelEndpoint, type Behaviour } from '../helpers/model-endpoint.js'
import { testClock } from '../helpers/clock.js'

const test = suite('httpModel against a local endpoint')

const ask = (m: ModelFn, signal: AbortSignal = new AbortController().signal): Promise<string | ModelAnswer> =>
  m({
    prompt: 'STABLE\nPhase: interpretation. Turn 1.',
    stablePrefix: 'STABLE',
    turn: 1,
    phase: 'interpretation',
    signal
  })

const failureOf = async (p: Promise<unknown>): Promise<FailureError['failure']> => {
  try {
    await p
  } catch (e) {
    if (e instanceof FailureError) return e.failure
    throw e
  }
  throw new Error('expected a failure')
}

/** Behaves as listed for requests 1, 2, …, then answers. */
const script =
  (...steps: Behaviour[]) =>
  (r: { n: number }): Behaviour =>
    steps[r.n - 1] ?? { kind: 'answer' }

test('an answer carries its provenance: the model as served, the origin only, parameters, usage, finish reason, attempts', async () => {
  const ep = await startModelEndpoint()
  const previous = process.env['OPENAI_API_KEY']
  process.env['OPENAI_API_KEY'] = 'sk-from-the-environment-must-not-be-sent'
  try {
    const a = (await ask(
      internalHttpModel({
        url: `${ep.url}/?token=secret`,
        model: 'qwen',
        temperature: 0.2,
        maxTokens: 512,
        jsonMode: true
      })
    )) as ModelAnswer
    assert.match(a.text, '"interpretation"')
    assert.equal(a.info?.kind, 'http')
    assert.is(a.info?.model, 'qwen-2026-11-01', 'the name the endpoint reported, not the one asked for')
    assert.is(a.info?.endpoint, ep.url.replace(/\/v1$/, ''))
    assert.equal(a.info?.parameters, { temperature: 0.2, max_tokens: 512, json_mode: true })
    const usage = a.info?.usage
    assert.ok(
      usage !== null &&
        usage !== undefined &&
        typeof usage.total_tokens === 'number' &&
        usage.total_tokens === (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0)
    )
    assert.is(a.info?.finishReason, 'stop')
    assert.is(a.info?.attempts, 1)
    const req = ep.requests[0]
    assert.equal(req?.body.response_format, { type: 'json_object' })
    assert.is(req?.body.temperature, 0.2)
    assert.is(req?.body.max_tokens, 512)
    assert.is(req?.body.messages?.[0]?.content, 'STABLE', 'the stable prefix is the system message')
    assert.is(
      req?.headers.authorization,
      undefined,
      'no key configured: no Authorization header, OPENAI_API_KEY is not picked up'
    )
  } finally {
    if (previous === undefined) delete process.env['OPENAI_API_KEY']
    else process.env['OPENAI_API_KEY'] = previous
    await ep.close()
  }
})

test('429 (Retry-After), 500, garbage, a reset and a hang are retried; the answer says how many attempts it took', async () => {
  const ep = await startModelEndpoint(
    script(
      { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
      { kind: 'status', status: 500 },
      { kind: 'garbage' },
      { kind: 'reset' },
      { kind: 'hang' }
    )
  )
  try {
    const clock = testClock({ random: [0.5] })
    const a = (await ask(
      internalHttpModel({ url: ep.url, model: 'm', maxAttempts: 6, timeoutMs: 400, backoffMs: 10 }, clock)
    )) as ModelAnswer
    assert.is(a.info?.attempts, 6)
    assert.is(ep.requests.length, 6)
    // The Retry-After of 1 s, then half (the draw) of 10 · 2^(n-1) ms after attempts 2 to 5.
    assert.equal(clock.sleeps, [1000, 10, 20, 40, 80])
    assert.is(clock.draws(), 4, 'no jitter drawn for the provider’s wait')
    assert.equal(ep.served, { 'status-429': 1, 'status-500': 1, garbage: 1, reset: 1, hang: 1, answer: 1 })
  } finally {
    await ep.close()
  }
})

test('408 and 409 are retried; retry-after-ms and an HTTP-date Retry-After are waited for; 400 is not retried', async () => {
  const start = Date.UTC(2026, 11, 1, 12, 0, 0)
  const ep = await startModelEndpoint(
    script(
      { kind: 'status', status: 408, headers: { 'retry-after-ms': '1500', 'retry-after': '99' } },
      // Asked at start + 1.5 s: wait until start + 6 s.
      { kind: 'status', status: 409, headers: { 'retry-after': new Date(start + 6000).toUTCString() } },
      { kind: 'status', status: 408 },
      { kind: 'status', status: 400 }
    )
  )
  try {
    const clock = testClock({ start, random: [0.25] })
    const f = await failureOf(
      ask(internalHttpModel({ url: ep.url, model: 'm', maxAttempts: 9, backoffMs: 100 }, clock))
    )
    assert.is(f.code, 'MODEL_HTTP_ERROR')
    assert.is(f.data['status'], 400)
    assert.is(f.data['attempts'], 4, 'the 400 ends the call')
    assert.equal(clock.sleeps, [1500, 4500, 100], 'retry-after-ms, the date, then a quarter of 100 · 2^2')
    assert.equal(ep.served, { 'status-408': 2, 'status-409': 1, 'status-400': 1 })
  } finally {
    await ep.close()
  }
})

test("bounded: attempts, and total time (a Retry-After past max_total_ms ends the call at once, keeping the provider's wish)", async () => {
  const ep = await startModelEndpoint(() => ({
    kind: 'status',
    status: 503,
    body: JSON.stringify({ error: { message: 'overloaded, try later' } })
  }))
  try {
    const f = await failureOf(ask(internalHttpModel({ url: ep.url, model: 'm', maxAttempts: 3, backoffMs: 5 })))
    assert.is(f.code, 'MODEL_HTTP_ERROR')
    assert.is(f.data['status'], 503)
    assert.is(f.data['attempts'], 3)
    assert.match(f.message, 'answered HTTP 503: overloaded, try later (after 3 attempt(s))')
    assert.is(ep.requests.length, 3)
  } finally {
    await ep.close()
  }
  const slow = await startModelEndpoint(() => ({ kind: 'status', status: 429, headers: { 'retry-after': '3600' } }))
  try {
    const clock = testClock()
    const f = await failureOf(
      ask(internalHttpModel({ url: slow.url, model: 'm', maxAttempts: 5, maxTotalMs: 2000 }, clock))
    )
    assert.equal(clock.sleeps, [], 'no hour-long sleep: the call ends at once')
    assert.is(f.data['status'], 429)
    assert.is(f.data['retry_after_ms'], 3_600_000)
    assert.is(slow.requests.length, 1)
  } finally {
    await slow.close()
  }
})

test("not retried: 404 model not found (the provider's text is shown); an unreachable endpoint says why", async () => {
  const ep = await startModelEndpoint(() => ({
    kind: 'status',
    status: 404,
    body: JSON.stringify({
      error: { message: 'The model `gpt-9` does not exist', type: 'invalid_request_error', code: 'model_not_found' }
    })
  }))
  try {
    const f = await failureOf(ask(internalHttpModel({ url: ep.url, model: 'gpt-9', backoffMs: 5 })))
    assert.is(f.code, 'MODEL_HTTP_ERROR')
    assert.is(f.data['status'], 404)
    assert.match(f.message, 'HTTP 404: The model `gpt-9` does not exist')
    assert.is(ep.requests.length, 1)
  } finally {
    await ep.close()
  }
  const closed = await startModelEndpoint()
  const url = closed.url
  await closed.close()
  const f = await failureOf(ask(internalHttpModel({ url, model: 'm', maxAttempts: 2, backoffMs: 5 })))
  assert.is(f.code, 'MODEL_CALL_FAILED')
  assert.match(f.message, /cannot be reached \(ECONNREFUSED, after 2 attempt\(s\)\)/)
})

test('the key is sent as a bearer token and never appears in a failure, even when the provider echoes it', async () => {
  const key = 'sk-test-0123456789abcdefSECRET'
  const ep = await startModelEndpoint(() => ({
    kind: 'status',
    status: 401,
    body: JSON.stringify({ error: { message: `Incorrect API key provided: ${key}. Bearer ${key}` } })
  }))
  try {
    const f = await failureOf(
      ask(internalHttpModel({ url: ep.url, model: 'm', apiKeyEnv: 'VBA_TEST_KEY', env: { VBA_TEST_KEY: key } }))
    )
    assert.is(ep.requests[0]?.headers.authorization, `Bearer ${key}`)
    assert.is(f.data['status'], 401)
    assert.not.ok(JSON.stringify(f).includes(key), JSON.stringify(f))
    assert.match(f.message, 'Incorrect API key provided: [key]')
    const missing = await failureOf(
      ask(internalHttpModel({ url: ep.url, model: 'm', apiKeyEnv: 'VBA_TEST_KEY', env: {} }))
    )
    assert.is(missing.code, 'MODEL_CALL_FAILED')
    assert.is(ep.requests.length, 1, 'without its key nothing is sent')
  } finally {
    await ep.close()
  }
})

test("the controller's abort ends a hanging call and a backoff wait at once (MODEL_CALL_CANCELLED)", async () => {
  const c = new AbortController()
  const ep = await startModelEndpoint((r) => {
    if (r.n === 1) {
      // Aborted while the request hangs (a per-attempt timeout of its own would be MODEL_CALL_FAILED).
      setImmediate(() => c.abort())
      return { kind: 'hang' }
    }
    return { kind: 'status', status: 429, headers: { 'retry-after': '60' } }
  })
  try {
    const f = await failureOf(
      ask(internalHttpModel({ url: ep.url, model: 'm', maxAttempts: 1, timeoutMs: 30_000 }), c.signal)
    )
    assert.is(f.code, 'MODEL_CALL_CANCELLED')
    assert.is(ep.requests.length, 1)
    const c2 = new AbortController()
    const seen: boolean[] = []
    const clock = testClock({
      onSleep: (_ms, signal) => {
        c2.abort()
        seen.push(signal.aborted)
      }
    })
    const f2 = await failureOf(ask(internalHttpModel({ url: ep.url, model: 'm' }, clock), c2.signal))
    assert.is(f2.code, 'MODEL_CALL_CANCELLED', 'the 60 s Retry-After wait is cut short')
    assert.equal(clock.sleeps, [60_000])
    assert.equal(seen, [true], "the wait is given the controller's signal")
    assert.is(ep.requests.length, 2, 'no attempt after the abort')
  } finally {
    await ep.close()
  }
})

test('the public adapter rejects with VbaError (code, kind, data)', async () => {
  const ep = await startModelEndpoint(() => ({
    kind: 'status',
    status: 400,
    body: JSON.stringify({ error: { message: 'bad request' } })
  }))
  try {
    let caught: unknown
    try {
      await ask(httpModel({ url: ep.url, model: 'm' }))
    } catch (e) {
      caught = e
    }
    assert.ok(caught instanceof VbaError)
    assert.is((caught as VbaError).code, 'MODEL_HTTP_ERROR')
    assert.ok((caught as VbaError).unavailable)
    assert.is((caught as VbaError).data['status'], 400)
  } finally {
    await ep.close()
  }
})

test.run()
