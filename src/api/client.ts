/**
 * The public client: one object built from one options object, with namespaces for cases,
 * research, investigations and transport, and a `close()` that releases every pool and handle.
 * Every method returns a Promise and rejects with a {@link VbaError}. The library never calls a
 * model on its own: investigations take the controller's model function.
 *
 * One context (context.ts: profile, research, store, closing) is shared by the namespace modules:
 * cases.ts, research.ts, investigations.ts, transport.ts and queue.ts.
 */
import { clientContext } from './context.js'
import { casesApi } from './cases.js'
import { researchApi } from './research.js'
import { investigationsApi } from './investigations.js'
import { transportApi } from './transport.js'
import { queueApi } from './queue.js'
import type { VbaOptions, Vba } from './types.js'

export type {
  SourceNotice,
  ProfileObject,
  VbaOptions,
  Appended,
  WriteOptions,
  CaseStatus,
  CasesApi,
  ResearchApi,
  AdvanceOptions,
  InvestigationsApi,
  TransportApi,
  WorkOptions,
  QueueApi,
  Vba,
  VerifyCaseOptions,
  ReportCaseOptions
} from './types.js'

/**
 * Opens a client.
 *
 * @example
 * const vba = await openVba({ profile: 'project.toml' })
 * try {
 *   const status = await vba.cases.status('cases/bug-20')
 * } finally {
 *   await vba.close()
 * }
 * @category Client
 */
export const openVba = async (options: VbaOptions = {}): Promise<Vba> => {
  const ctx = await clientContext(options)
  return {
    profile: ctx.profile,
    cases: casesApi(ctx),
    research: researchApi(ctx),
    investigations: investigationsApi(ctx),
    transport: transportApi(ctx),
    queue: queueApi(ctx),
    close: ctx.close
  }
}
