/**
 * The budget (family RULE_BUDGET): reservations are unique and never overdraw it, a plan's
 * reservation costs one query and is made with the plan, a reservation is settled once (consumed
 * by its capture, released as refused after a failed query or as cancelled by an operator), and
 * a top-up needs a running investigation and a reason.
 */
import { budgetTotal, heldBudget, queryCost, remainingBudget } from '../budget.js'
import { answerableFromCase } from './repeats.js'
import { digestOf } from './digest.js'
import { isTerminal } from './lifecycle.js'
import { inCommand, type EventOf, type RuleContext } from './context.js'

export const checkReserved = (c: RuleContext<EventOf<'BudgetReserved'>>): void => {
  const { s, e, cmd } = c
  const d = e.data
  const r = s.research
  if (r.open.has(d.reservation_id) || r.closed.has(d.reservation_id))
    c.bad('budget.reservation-unique', `reservation ${d.reservation_id} exists already`)
  if (isTerminal(s)) c.bad('lifecycle.terminal', `no reservation once the investigation is ${s.state}`)
  if (s.settings !== null && r.consumed + heldBudget(r) + d.amount > budgetTotal(s)) {
    c.bad(
      'budget.overdrawn',
      `reserving ${d.amount} leaves ${remainingBudget(s) - d.amount} of the budget (${r.consumed} consumed, ${heldBudget(r)} held, total ${budgetTotal(s)})`
    )
  }
  if (d.plan_id === null) {
    if (d.request_digest === null)
      c.bad('research.request', "an operator query's reservation names the digest of its request")
    else if (d.request !== null && digestOf(d.request) !== d.request_digest)
      c.bad(
        'research.request',
        `the request reservation ${d.reservation_id} records is not the one its request_digest names: a refusal would show another query than was asked`
      )
    return
  }
  if (d.request !== null)
    c.bad(
      'research.request',
      `plan ${d.plan_id}'s request is the one its PlanConfirmed holds; its reservation records none`
    )
  const plan = s.pendingPlan
  if (
    plan === null ||
    plan.plan_id !== d.plan_id ||
    plan.reservation !== null ||
    !inCommand(cmd, (x) => x.type === 'PlanConfirmed' && x.data.plan_id === d.plan_id)
  ) {
    c.bad('budget.reservation-plan', `a plan's reservation is made in the command that confirms plan ${d.plan_id}`)
  }
  if (s.settings !== null && d.amount !== queryCost(s))
    c.bad('budget.reservation-plan', `project.query costs ${queryCost(s)} in this investigation, not ${d.amount}`)
  if (d.requester !== null)
    c.bad(
      'research.requester',
      `plan ${d.plan_id} was asked for by the model of its turn, not by ${d.requester.protocol} client ${JSON.stringify(d.requester.name)}`
    )
  const known = plan === null ? null : answerableFromCase(s, plan.arguments, digestOf)
  if (known !== null)
    c.bad(
      'research.from-case',
      `plan ${d.plan_id} asks what ${known} answers: an identical query is answered from the case, not reserved and run again`
    )
}

export const checkSettled = (c: RuleContext<EventOf<'BudgetConsumed'> | EventOf<'BudgetReleased'>>): void => {
  const { s, e, cmd } = c
  const d = e.data
  const open = s.research.open.get(d.reservation_id)
  if (open === undefined) c.bad('budget.settle-open', `reservation ${d.reservation_id} is not open`)
  else if (open.amount !== d.amount)
    c.bad('budget.settle-open', `reservation ${d.reservation_id} holds ${open.amount}, not ${d.amount}`)
  if (e.type === 'BudgetConsumed') {
    if (!inCommand(cmd, (x) => x.type === 'CaptureRecorded' && x.data.reservation_id === d.reservation_id))
      c.bad('budget.settle-open', `budget is consumed by the capture of ${d.reservation_id}, in its command`)
  } else if (e.data.reason === 'refused') {
    if (
      e.actor !== 'system' ||
      !inCommand(
        cmd,
        (x) => x.type === 'ResearchFailed' && x.data.reservation_id === d.reservation_id && !x.data.unavailable
      )
    ) {
      c.bad(
        'budget.release-reason',
        `a release as refused follows the failed query of ${d.reservation_id} (written by system)`
      )
    }
  } else if (
    e.actor !== 'operator' ||
    !inCommand(cmd, (x) => x.type === 'PlanCancelled' && x.data.reservation_id === d.reservation_id)
  ) {
    c.bad('budget.release-reason', `a release as cancelled follows an operator's PlanCancelled of ${d.reservation_id}`)
  }
}

export const checkToppedUp = (c: RuleContext<EventOf<'BudgetToppedUp'>>): void => {
  if (c.s.settings === null || isTerminal(c.s))
    c.bad('budget.top-up', `a top-up needs a running investigation; the case is ${c.s.state}`)
  if (c.e.data.reason.trim() === '') c.bad('budget.top-up', 'a top-up gives its reason')
}
