/**
 * Where an evaluation run may go: its folder (--out) must lie outside the suite. A suite's bug
 * folders are every folder in it, so a run inside the suite would have its own folders (cases/,
 * reports/) read as bugs the next time the suite is read, and its resume refused.
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import { fail } from '../failures/error.js'

/**
 * `p` made absolute with the links of its existing part resolved (the part not made yet as
 * written): where a folder will be once it is made.
 */
export const realPlace = async (p: string): Promise<string> => {
  let head = path.resolve(p)
  const rest: string[] = []
  for (;;) {
    const real = await fsp.realpath(head).catch(() => null)
    if (real !== null) return path.join(real, ...rest)
    const up = path.dirname(head)
    if (up === head) return path.resolve(p)
    rest.unshift(path.basename(head))
    head = up
  }
}

/** Refuses (INVALID_ARGUMENT) a run folder `out` that is the suite folder `suite` or inside it, links resolved. */
export const checkOutOutsideSuite = async (out: string, suite: string): Promise<void> => {
  const [o, s] = await Promise.all([realPlace(out), realPlace(suite)])
  const within = path.relative(s, o)
  if (within === '' || !(within === '..' || within.startsWith(`..${path.sep}`) || path.isAbsolute(within)))
    fail(
      'INVALID_ARGUMENT',
      `--out ${out} is ${within === '' ? 'the suite folder' : 'inside the suite folder'} ${suite}: a run's own folders would be read as bugs of the suite; choose an --out outside it`,
      { out: o, suite: s }
    )
}
