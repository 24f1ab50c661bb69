/**
 * The HTTP model client's retry policy in full, without HTTP: the statuses retried, both forms of
 * Retry-After and retry-after-ms, the backoff's doubling, its full jitter and its 30 s cap, and the
 * decision after a failed attempt (the attempts and the total bound).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import {
  backoffMs,
  MAX_BACKOFF_MS,
  nextStep,
  retryableStatus,
  retryAfterMs,
  systemClock
} from '../../src/investigation/retry-policy.js'

const test = suite('retry policy')

const headers = (h: Record<string, string>): Headers => new Headers(h)
const NOW = Date.UTC(2026, 11, 1, 12, 0, 0)

test('retried: 408, 409, 429 and every 5xx; not: the other 4xx', () => {
  for (const s of [408, 409, 429, 500, 502, 503, 504, 599]) assert.ok(retryableStatus(s), `${s} is retried`)
  for (const s of [400, 401, 403, 404, 405, 410, 413, 422, 451]) assert.not.ok(retryableStatus(s), `${s} is final`)
})

test('Retry-After: retry-after-ms first, then seconds, then an HTTP date; nothing usable is null', () => {
  assert.is(retryAfterMs(undefined, NOW), null)
  assert.is(retryAfterMs(headers({}), NOW), null)
  assert.is(retryAfterMs(headers({ 'retry-after-ms': '250' }), NOW), 250)
  assert.is(retryAfterMs(headers({ 'retry-after-ms': '1.5' }), NOW), 1.5)
  assert.is(retryAfterMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }), NOW), 250, 'the ms form wins')
  assert.is(
    retryAfterMs(headers({ 'retry-after-ms': 'soon', 'retry-after': '9' }), NOW),
    9000,
    'a bad ms form is ignored'
  )
  assert.is(retryAfterMs(headers({ 'retry-after-ms': '-5', 'retry-after': '2' }), NOW), 2000)
  assert.is(retryAfterMs(headers({ 'retry-after': '3' }), NOW), 3000)
  assert.is(retryAfterMs(headers({ 'retry-after': '0' }), NOW), 0)
  assert.is(retryAfterMs(headers({ 'retry-after': new Date(NOW + 7000).toUTCString() }), NOW), 7000, 'an HTTP date')
  assert.is(retryAfterMs(headers({ 'retry-after': 'Tue, 01 Dec 2026 12:01:00 GMT' }), NOW), 60_000)
  assert.is(retryAfterMs(headers({ 'retry-after': new Date(NOW - 7000).toUTCString() }), NOW), 0, 'a past date is now')
  assert.is(retryAfterMs(headers({ 'retry-after': 'whenever' }), NOW), null)
  assert.is(retryAfterMs(headers({ 'retry-after': '-1' }), NOW), 0, 'a negative wait is now')
})

test('backoff: doubles per attempt from the first backoff, full jitter over [0, base), capped at 30 s', () => {
  assert.is(MAX_BACKOFF_MS, 30_000)
  const top = (): number => 1 - Number.EPSILON
  assert.is(
    backoffMs(1, 500, () => 0),
    0,
    'full jitter reaches 0'
  )
  assert.is(
    backoffMs(1, 500, () => 0.5),
    250
  )
  assert.is(
    backoffMs(2, 500, () => 0.5),
    500
  )
  assert.is(
    backoffMs(3, 500, () => 0.5),
    1000
  )
  assert.is(
    backoffMs(4, 500, () => 0.25),
    1000
  )
  assert.ok(backoffMs(1, 500, top) < 500, 'below the base')
  assert.ok(backoffMs(1, 500, top) > 499.9)
  assert.is(
    backoffMs(7, 500, () => 0.5),
    15_000,
    '500 · 2^6 = 32 000 is capped to 30 000 before the jitter'
  )
  assert.is(
    backoffMs(8, 500, () => 0.5),
    15_000
  )
  assert.is(
    backoffMs(40, 500, () => 0.5),
    15_000,
    'no overflow past the cap'
  )
  assert.ok(backoffMs(40, 500, top) < MAX_BACKOFF_MS)
  assert.ok(backoffMs(40, 500, top) > MAX_BACKOFF_MS - 0.01)
  assert.is(
    backoffMs(1, 60_000, () => 0.5),
    15_000,
    'a first backoff above the cap is capped too'
  )
})

const bounds = { maxAttempts: 5, maxTotalMs: 10_000, backoffMs: 500 }
const failed = (over: Partial<Parameters<typeof nextStep>[0]> = {}): Parameters<typeof nextStep>[0] => ({
  attempt: 1,
  retry: true,
  retryAfterMs: null,
  elapsedMs: 0,
  ...over
})

test('next step: the backoff, or the provider’s wait instead of it', () => {
  assert.equal(
    nextStep(failed(), bounds, () => 0.5),
    { kind: 'wait', ms: 250 }
  )
  assert.equal(
    nextStep(failed({ attempt: 3 }), bounds, () => 0.5),
    { kind: 'wait', ms: 1000 }
  )
  let draws = 0
  const counting = (): number => {
    draws++
    return 0.5
  }
  assert.equal(nextStep(failed({ retryAfterMs: 1234 }), bounds, counting), { kind: 'wait', ms: 1234 })
  assert.is(draws, 0, 'no jitter on the provider’s wait')
  assert.equal(nextStep(failed({ retryAfterMs: 0 }), bounds, counting), { kind: 'wait', ms: 0 })
})

test('next step: stop on a final failure, on the last attempt, and when the wait would end past the total bound', () => {
  assert.equal(
    nextStep(failed({ retry: false }), bounds, () => 0),
    { kind: 'stop' }
  )
  assert.equal(
    nextStep(failed({ attempt: 4 }), bounds, () => 0),
    { kind: 'wait', ms: 0 }
  )
  assert.equal(
    nextStep(failed({ attempt: 5 }), bounds, () => 0),
    { kind: 'stop' }
  )
  assert.equal(
    nextStep(failed({ attempt: 6 }), bounds, () => 0),
    { kind: 'stop' }
  )
  assert.equal(
    nextStep(failed({ retryAfterMs: 3_600_000 }), bounds, () => 0),
    { kind: 'stop' },
    'no hour-long sleep'
  )
  assert.equal(
    nextStep(failed({ elapsedMs: 9000, retryAfterMs: 999 }), bounds, () => 0),
    { kind: 'wait', ms: 999 }
  )
  assert.equal(
    nextStep(failed({ elapsedMs: 9000, retryAfterMs: 1000 }), bounds, () => 0),
    { kind: 'stop' }
  )
  assert.equal(
    nextStep(failed({ elapsedMs: 10_000 }), bounds, () => 0),
    { kind: 'stop' },
    'the bound is spent'
  )
})

test('the system clock: its sleep ends at once on an abort, or on a wait of 0, and never rejects', async () => {
  const c = new AbortController()
  c.abort()
  await systemClock.sleep(3_600_000, c.signal)
  await systemClock.sleep(0, new AbortController().signal)
  const later = new AbortController()
  const p = systemClock.sleep(3_600_000, later.signal)
  later.abort()
  await p
  const r = systemClock.random()
  assert.ok(r >= 0 && r < 1)
  assert.type(systemClock.now(), 'number')
})

test.run()
