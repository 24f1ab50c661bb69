/**
 * The options more than one verb takes, each defined once: its flag, its words, its parser
 * (commander's `argParser`, so a bad value is refused while the command line is read) and its
 * default, imported from where the default means something. `--store` is one global option of the
 * program (program.ts); the rest are added to each verb that takes them.
 */
import { Option } from 'commander'
import { fail } from '../failures/error.js'
import { LEASE_MS } from '../adapters/case-store/store.js'
import { DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT } from '../investigation/loop-options.js'
import { DEFAULT_SLOTS, MAX_SLOTS } from '../domain/worker-name.js'

/**
 * A parser of a whole number from `min` to `max`: decimal digits only (no sign, `0x50`, `1e3`,
 * `8080.0` or spaces), else INVALID_ARGUMENT naming the flag and the range.
 */
export const wholeNumber =
  (flag: string, min: number, max: number, note = ''): ((text: string) => number) =>
  (text) => {
    const n = Number(text)
    if (!/^\d{1,16}$/.test(text) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `of ${min} or more` : `from ${min} to ${max}`
      fail('INVALID_ARGUMENT', `${flag} takes a whole number ${range}${note}, got ${JSON.stringify(text.slice(0, 20))}`)
    }
    return n
  }

/** A parser of a number of days (digits, a decimal fraction allowed). */
export const days =
  (flag: string): ((text: string) => number) =>
  (text) => {
    if (!/^\d{1,9}(\.\d{1,9})?$/.test(text))
      fail('INVALID_ARGUMENT', `${flag} takes a number of days, got ${JSON.stringify(text.slice(0, 20))}`)
    return Number(text)
  }

/** What `vba check` does, for its help. */
export const CHECK_HELP =
  "try a profile against what it names: every path as it resolves (against the profile's folder), the repository and commit, the credentials, a connection, every allowed and enrichment table and column, one trial query; exit 2 for a profile mistake, 3 for a provider that is down"

/** What `vba resume` lifts, for its help. */
export const RESUME_HELP =
  'lift a timed block into the state it interrupted: INVALID_LLM_RESPONSES or MODEL_UNAVAILABLE, once its retry time has passed or now with --manual-retry (recorded); it runs no turn: vba investigate does (RESEARCH_UNAVAILABLE: vba investigate --manual-retry; AWAITING_TEST_FEEDBACK: vba case feedback)'

/** How long a lease taken by hand (`vba queue claim`) lasts unless `--lease-ms` says: five minutes. */
export const CLAIM_LEASE_MS = 300_000

/** Where `vba serve` listens unless `--host` and `--port` say: loopback only, port 8080. */
export const SERVE_HOST = '127.0.0.1'
export const SERVE_PORT = 8080

/** The words of the global `--store URL` (its value, or `$VBA_STORE`, is read by stores.ts). */
/** What verify takes about signers: the trust file, principal-to-actor bindings, and whether every command must be signed. */
export interface TrustOptions {
  readonly trust?: string
  readonly trustActor?: readonly string[]
  readonly requireSigned?: boolean
}

/** `--trust FILE`: an allowed_signers file (git's and OpenSSH's format). */
export const trustOption = (): Option =>
  new Option(
    '--trust <file>',
    "an allowed_signers file (git's format: principals [namespaces=,valid-after=,valid-before=] key): a signature by a key it does not allow is SIGNER_UNTRUSTED; every signer is named"
  )

/** `--trust-actor PRINCIPAL=ACTOR[,ACTOR]`, repeated: what a principal may sign for. */
export const trustActorOption = (): Option =>
  new Option(
    '--trust-actor <principal=actors>',
    'the principal may sign commands of these actors only (operator,controller,model,system; repeat per principal)'
  ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value])

export const SIGN_KEY_HELP =
  'sign every command this run appends with this Ed25519 key (an OpenSSH key file, never the key itself; default $VBA_SIGN_KEY): each command ends with a CommandSigned event'

export const STORE_HELP =
  'a SQL store of cases: postgres://user@host/db or mysql://user@host/db, a password through ?password_env=VAR (default $VBA_STORE); a CASE is then a case id in it'

/** `--config FILE`, the project profile (required). */
export const configOption = (description = 'project profile (TOML)'): Option =>
  new Option('--config <file>', description).makeOptionMandatory()

/** `--expect-generation N`: refuse unless the case is at generation N. */
export const expectGenerationOption = (): Option =>
  new Option(
    '--expect-generation <n>',
    'optional: refuse unless the case is still at generation N (vba status prints it), so a write is not based on a state that moved on'
  ).argParser(wholeNumber('--expect-generation', 0, Number.MAX_SAFE_INTEGER))

/** `--command-id ID`: the idempotency key of a write. */
export const commandIdOption = (): Option =>
  new Option('--command-id <id>', 'idempotency key (a retry with the same id records nothing new)')

/** `--force`: an existing output may be replaced. */
export const forceOption = (what: string): Option =>
  new Option('--force', `replace ${what} if it is a regular file (never a link, device or directory)`)

/** `--against PROFILE`: re-derive the evidence from the world a profile reaches. */
export const againstOption = (description: string): Option => new Option('--against <profile>', description)

/** `--max-turns N`: model turns per call (the loop's default and bound). */
export const maxTurnsOption = (description: string): Option =>
  new Option('--max-turns <n>', description)
    .argParser(wholeNumber('--max-turns', 1, MAX_TURNS_LIMIT))
    .default(DEFAULT_MAX_TURNS)

/** `--lease-ms N`: how long a lease lasts (the stores' bounds). */
export const leaseMsOption = (description: string, fallback: number = LEASE_MS.default): Option =>
  new Option('--lease-ms <n>', description)
    .argParser(wholeNumber('--lease-ms', LEASE_MS.min, LEASE_MS.max))
    .default(fallback)

/** `--concurrency N`: a worker's slots. */
export const concurrencyOption = (): Option =>
  new Option('--concurrency <n>', 'cases advanced at the same time')
    .argParser(wholeNumber('--concurrency', 1, MAX_SLOTS))
    .default(DEFAULT_SLOTS)

/** The model of a verb that runs the loop: a command, or an OpenAI-compatible endpoint and a model name. */
export const modelOptions = (): Option[] => [
  new Option(
    '--model-command <cmd>',
    'run CMD through the shell once per turn: the prompt on its stdin, its stdout is the answer'
  ),
  new Option(
    '--model-url <url>',
    'an OpenAI-compatible chat-completions endpoint (the API key from [model] api_key_env)'
  ),
  new Option('--model <name>', 'the model name for --model-url')
]
