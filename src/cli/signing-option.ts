/** Who signs the commands a verb appends: --sign-key, else VBA_SIGN_KEY, else the [signing] of the verb's --config profile. */
import type { Command } from 'commander'
import { useProcessSigner } from '../adapters/env.js'

/** The signer the [signing] section of the verb's profile names, if any (read on the first append). */
const profileSigner = async (config: string, principal: string | undefined) => {
  const { loadProfile } = await import('../adapters/config/profile.js')
  const signing = (await loadProfile(config)).signing
  if (signing === undefined) return undefined
  const { readSigner } = await import('../adapters/ssh-keys.js')
  return readSigner(signing.key, principal ?? signing.principal)
}

/** A preAction hook: the process's signer for this verb, loaded when the first command is appended. */
export const useSigner = (root: Command, verb: Command): void => {
  const key = (root.getOptionValue('signKey') as string | undefined) ?? process.env['VBA_SIGN_KEY']
  const principal = root.getOptionValue('signPrincipal') as string | undefined
  const config = verb.getOptionValue('config') as string | undefined
  useProcessSigner(
    key !== undefined && key !== ''
      ? async () => (await import('../adapters/ssh-keys.js')).readSigner(key, principal)
      : config === undefined
        ? undefined
        : async () => profileSigner(config, principal)
  )
}
