/** The client's `research` namespace: one query without a case, or one recorded inside a case. */
import { queryInCase } from '../commands/case-query.js'
import { orThrow, settle } from './errors.js'
import type { ClientContext } from './context.js'
import type { ResearchApi } from './types.js'

/** The `research` namespace over a client's context. */
export const researchApi = (ctx: ClientContext): ResearchApi => {
  const { env, at, researchOf } = ctx
  return {
    query: async (args) => settle(async () => orThrow(await researchOf().query(args)())),
    queryInCase: async (dir, args, o = {}) =>
      settle(() => queryInCase(at(dir), researchOf(), args, o.commandId ?? `query-${env.newId()}`, { env }))
  }
}
