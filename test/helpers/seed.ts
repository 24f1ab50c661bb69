/**
 * One seed for every property and random test of a run: VBA_TEST_SEED, or a fixed default, so a
 * run is repeatable and a failure can be replayed. fast-check prints the seed (and the path of the
 * shrunk case) in every failure it reports; {@link seededRandom} draws from the same seed for
 * tests that generate their own inputs, and {@link withSeed} puts it into their failures.
 *
 *   VBA_TEST_SEED=123 node dist/test/projections/guard.property.test.js
 */
import type * as fc from 'fast-check'

const DEFAULT_SEED = 20261130

const parse = (text: string | undefined): number => {
  if (text === undefined || text === '') return DEFAULT_SEED
  const n = Number(text)
  if (!Number.isSafeInteger(n)) throw new Error(`VBA_TEST_SEED must be a whole number, got ${JSON.stringify(text)}`)
  return n
}

/** The run's seed. */
export const SEED = parse(process.env['VBA_TEST_SEED'])

/** fast-check options: `numRuns` runs from the run's seed. */
export const fcOptions = <T>(numRuns: number): fc.Parameters<T> => ({ numRuns, seed: SEED })

/** A repeatable generator of numbers in [0, 1) (mulberry32) from the run's seed, or `seed`. */
export const seededRandom = (seed: number = SEED): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** Runs `body`; a failure says the seed that replays it. */
export const withSeed = async <A>(body: () => A | Promise<A>): Promise<A> => {
  try {
    return await body()
  } catch (e) {
    if (e instanceof Error) e.message = `${e.message}\n(replay with VBA_TEST_SEED=${SEED})`
    throw e
  }
}
