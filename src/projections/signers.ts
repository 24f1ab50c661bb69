/**
 * Who signed which command, as the log claims it (the signatures themselves are checked by
 * verify): each signer with the commands it signed, and the number of unsigned commands. Not a
 * default projection: `vba status` and `vba show` ask for it, and say nothing of signers for a
 * case without a signature.
 */
import type { RecordedEvent } from '../events/chain.js'
import type { Projection } from './projection.js'

/** One signer of a case, as its CommandSigned events name it. @category cases */
export interface SignerView {
  readonly principal: string
  readonly fingerprint: string
  /** The commands it signed, by id and first..last seq. */
  readonly commands: ReadonlyArray<{
    readonly command_id: string
    readonly first_seq: number
    readonly last_seq: number
  }>
}

/** Who signed the commands of a case. @category cases */
export interface SignersView {
  readonly commands: number
  readonly unsigned: number
  readonly signers: readonly SignerView[]
}

interface State {
  commands: number
  signed: number
  last: string | null
  by: Map<string, { principal: string; fingerprint: string; commands: SignerView['commands'][number][] }>
}

export const signersProjection: Projection<State, SignersView> = {
  name: 'signers',
  version: 1,
  init: () => ({ commands: 0, signed: 0, last: null, by: new Map() }),
  evolve: (s, e: RecordedEvent) => {
    if (e.command_id !== s.last) {
      s.commands++
      s.last = e.command_id
    }
    if (e.type !== 'CommandSigned') return s
    const d = e.data
    const key = `${d.principal}\u0000${d.fingerprint}`
    const entry = s.by.get(key) ?? { principal: d.principal, fingerprint: d.fingerprint, commands: [] }
    entry.commands.push({ command_id: e.command_id, first_seq: d.first_seq, last_seq: d.last_seq })
    s.by.set(key, entry)
    s.signed++
    return s
  },
  view: (s) => ({ commands: s.commands, unsigned: s.commands - s.signed, signers: [...s.by.values()] })
}

/** One line per signer for a terminal; none for a case without a signature. */
export const signersLines = (v: SignersView | undefined): string[] =>
  v === undefined || v.signers.length === 0
    ? []
    : [
        `signed      ${v.commands - v.unsigned} of ${v.commands} commands (signatures checked by vba verify)`,
        ...v.signers.map(
          (x) =>
            `  ${x.principal} ${x.fingerprint}: ${x.commands.length} command${x.commands.length === 1 ? '' : 's'} (seq ${x.commands.map((c) => (c.first_seq === c.last_seq ? `${c.first_seq}` : `${c.first_seq}-${c.last_seq}`)).join(', ')})`
        )
      ]
