/**
 * One process opening a snapshot with a persisted index and answering source queries; prints the
 * answers (captures as JSON, failures as their codes) and the index notices it got, as one JSON
 * line. Used to race several builders of the same commit's index: it says `ready` on stderr and
 * starts only when a line arrives on stdin, so the racers start together however loaded the machine.
 *
 *   node snapshot-process.js REPOSITORY COMMIT INDEX_ROOT QUERIES_JSON
 */
import { openSnapshot, type SnapshotNotice } from '../../src/adapters/git/snapshot.js'
import { answerAll } from './snapshot-answers.js'

const [repository, commit, root, queries] = process.argv.slice(2)
if (repository === undefined || commit === undefined || root === undefined || queries === undefined) {
  process.stderr.write('usage: snapshot-process.js REPOSITORY COMMIT INDEX_ROOT QUERIES_JSON\n')
  process.exit(2)
}
process.stderr.write('ready\n')
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()))
process.stdin.pause()
const notices: SnapshotNotice['code'][] = []
const snap = await openSnapshot(repository, commit, { index: root, onNotice: (n) => notices.push(n.code) })
const answers = await answerAll(snap, JSON.parse(queries) as unknown[])
snap.close()
process.stdout.write(`${JSON.stringify({ answers, notices })}\n`)
