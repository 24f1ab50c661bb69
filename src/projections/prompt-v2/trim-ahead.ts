/**
 * The prompt guard's trim (guard.ts) without walking every step: the steps it would take one at a
 * time, taken at once as long as no state on the way can fit. Pure.
 *
 * The trim takes one item at a time from the payload that comes first in its order (the lower
 * rank, the larger, the older, the first listed). A step that makes a payload larger (its first
 * cut adds a continuation marker longer than the item) keeps it first, so its next step follows
 * at once: every step is taken at the least size its payload has had so far, `leastFrom` of the
 * items it had then. Those are non-increasing along a payload's steps, so the trim's steps are all
 * the steps in the order (rank, that least size from the largest, age, index), and all the steps
 * of the ranks before and above a level in one rank are a first part of them. While they are
 * taken the total is never below the sum of every payload's least size where they end: when that
 * exceeds the room, no state on the way fits and they are taken together. The trim then goes on
 * one step at a time from there, where the fit is near.
 */

import { viewSizes } from './view-sizes.js'
import { floorOf, type PayloadFit, type Sizing } from './payload-fit.js'

/** A payload's trim order's first key: 1 for cited payloads under `newestWhole` (`keep`), else 0. */
export const rankOf = (f: PayloadFit, keep: boolean): number => (keep && f.cited ? 1 : 0)

/** One payload of the rank being taken: its least sizes by items shown, and what the search knows. */
interface Member {
  readonly i: number
  /** least[n] + add: its least size on the way from whole down to n items (view-sizes.ts). */
  readonly least: readonly number[]
  readonly add: number
  /** Its items after the steps above the search's low and high levels (items only grow with the level). */
  low: number
  high: number
}

/** Items of `m` after the steps taken at least sizes above `level` (between m.low and m.high). */
const itemsAfter = (m: Member, level: number): number => {
  const { least, add } = m
  if ((least[m.high] ?? 0) + add <= level) return m.high
  // the fewest items whose step was taken above the level: the steps from more items than it
  let lo = m.low
  let hi = m.high
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    if ((least[mid] ?? 0) + add > level) hi = mid
    else lo = mid
  }
  return (least[lo] ?? 0) + add > level ? lo : hi - 1
}

/**
 * Takes the trim's steps at once while no state on the way fits `room` (see the module comment):
 * `shown` and `sizes` (each payload's size) are updated, the new total returned. Only from whole:
 * a rank with a payload already trimmed is left to the stepping trim.
 */
export const trimAhead = (
  z: Sizing,
  shown: Array<number | null>,
  sizes: number[],
  total: number,
  room: number
): number => {
  const { fits, keep } = z
  const ranks: number[] = []
  for (const f of fits) if (!ranks.includes(rankOf(f, keep))) ranks.push(rankOf(f, keep))
  ranks.sort((a, b) => a - b)
  for (const rank of ranks) {
    const members: Member[] = []
    let others = total
    for (let i = 0; i < shown.length; i++) {
      const n = shown[i] ?? null
      const f = fits[i]
      if (n === null || f === undefined) continue
      const floor = floorOf(f, keep)
      if (rankOf(f, keep) !== rank || n <= floor) continue
      if (n !== f.items) return total
      members.push({ i, least: viewSizes(f.view).least(), add: f.fixed, low: floor, high: n })
      others -= sizes[i] ?? 0
    }
    if (members.length === 0) continue
    const items: number[] = []
    // Every step of this rank (each payload at its floor): then the next rank's.
    if (leastTotal(members, others, -1, items) > room) {
      total = take(z, members, items, shown, sizes, others)
      continue
    }
    // No step is above the largest size: the total there, larger than the room.
    let lo = -1
    let hi = 0
    for (const m of members) hi = Math.max(hi, sizes[m.i] ?? 0)
    const at: number[] = []
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      // Above the room, the members not read keep their bounds (looser, as true).
      const read = readUntilAbove(members, others, mid, at, room)
      const above = read > 0
      const count = above ? read : members.length
      for (let k = 0; k < count; k++) {
        const m = members[k] as Member
        const n = at[k] ?? m.high
        if (above) m.high = n
        else m.low = n
      }
      if (above) hi = mid
      else lo = mid
    }
    leastTotal(members, others, hi, items)
    return take(z, members, items, shown, sizes, others)
  }
  return total
}

/** The least total on the way to the steps above `level` (`others` plus each member's), with each member's items then into `items`. */
const leastTotal = (members: readonly Member[], others: number, level: number, items: number[]): number => {
  let t = others
  for (let k = 0; k < members.length; k++) {
    const m = members[k] as Member
    const n = itemsAfter(m, level)
    items[k] = n
    t += (m.least[n] ?? 0) + m.add
  }
  return t
}

/**
 * {@link leastTotal} until it exceeds `room` (its parts only grow): how many members it read into
 * `items` then, or 0 when the whole total is within the room (every member read).
 */
const readUntilAbove = (
  members: readonly Member[],
  others: number,
  level: number,
  items: number[],
  room: number
): number => {
  let t = others
  for (let k = 0; k < members.length; k++) {
    const m = members[k] as Member
    const n = itemsAfter(m, level)
    items[k] = n
    t += (m.least[n] ?? 0) + m.add
    if (t > room) return k + 1
  }
  return 0
}

/** Shows each member with its `items`: `shown` and `sizes` updated, the new total (`others` plus theirs) returned. */
const take = (
  z: Sizing,
  members: readonly Member[],
  items: readonly number[],
  shown: Array<number | null>,
  sizes: number[],
  others: number
): number => {
  let t = others
  for (let k = 0; k < members.length; k++) {
    const m = members[k] as Member
    const n = items[k] ?? m.high
    shown[m.i] = n
    const size = z.fits[m.i]?.sizeOf(n) ?? 0
    sizes[m.i] = size
    t += size
  }
  return t
}
