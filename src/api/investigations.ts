/**
 * The client's `investigations` namespace: prepare a revision, start, advance with the
 * controller's model, resume, feedback, cancel a plan, top up the budget, the next prompt.
 */
import { enrichmentConfig, prepareRevision } from '../commands/prepare.js'
import { cancelPlan, topUpBudget } from '../commands/typed.js'
import { advance, nextPrompt } from '../investigation/loop.js'
import { recordFeedback, resumeCase, startInvestigation } from '../commands/lifecycle-commands.js'
import { startSettings } from '../investigation/settings.js'
import type { Env } from '../adapters/env.js'
import { orThrow, settle, settleOwn, type Own } from './errors.js'
import { appended, noProfile, type ClientContext } from './context.js'
import type { AdvanceOptions, InvestigationsApi } from './types.js'
import { definedMembers, optional } from '../optional.js'

/** The loop's options of an advance (without research, which the caller adds); `own` wraps the caller's callback. */
export const advanceOptions = (o: AdvanceOptions, env: Env, own: Own) => ({
  model: o.model,
  env,
  ...definedMembers(o, 'maxTurns', 'manualRetry', 'expectedGeneration', 'signal'),
  ...optional('onStep', own(o.onStep))
})

/** The `investigations` namespace over a client's context. */
export const investigationsApi = (ctx: ClientContext): InvestigationsApi => {
  const { env, profile, at, live, researchOf, write } = ctx
  return {
    prepare: async (dir, inputs, o = {}) => {
      const r = researchOf()
      if (profile === null) throw noProfile()
      const config = orThrow(enrichmentConfig(profile))
      return settle(() =>
        prepareRevision(at(dir), r, config, inputs, { env, ...definedMembers(o, 'author', 'extract', 'again') })
      )
    },
    start: async (dir, o = {}) => {
      live()
      const settings = o.settings ?? (profile === null ? null : orThrow(await startSettings(profile, researchOf())))
      if (settings === null) throw noProfile()
      const generation = await settle(() =>
        startInvestigation(at(dir), { settings, env, ...optional('commandId', o.commandId) })
      )
      return { generation }
    },
    advance: async (dir, o) =>
      settleOwn((own) => advance(at(dir), { ...advanceOptions(o, env, own), research: researchOf() })),
    resume: async (dir, o) =>
      settle(() =>
        resumeCase(at(dir), {
          manualRetry: o.manualRetry,
          env,
          ...optional('expectedGeneration', o.expectedGeneration)
        })
      ),
    feedback: async (dir, f) => ({
      generation: await settle(() =>
        recordFeedback(at(dir), f.requestId, f.text, {
          env,
          ...optional('commandId', f.commandId)
        })
      )
    }),
    cancelPlan: async (dir, o) =>
      appended(() =>
        cancelPlan(at(dir), {
          reason: o.reason,
          ...optional('reservationId', o.reservationId),
          ...write(o)
        })
      ),
    topUp: async (dir, o) => appended(() => topUpBudget(at(dir), { amount: o.amount, reason: o.reason, ...write(o) })),
    nextPrompt: async (dir) => settle(() => nextPrompt(at(dir)))
  }
}
