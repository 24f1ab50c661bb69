/** The budget of a case over its log (total, reserved, consumed by seq) and its chart as inline SVG. */
import type { RecordedEvent } from '../../events/chain.js'

interface BudgetPoint {
  readonly seq: number
  readonly total: number
  readonly reserved: number
  readonly consumed: number
}

export const budgetSeries = (events: readonly RecordedEvent[]): BudgetPoint[] => {
  let total = 0
  let held = 0
  let consumed = 0
  const out: BudgetPoint[] = []
  const open = new Map<string, number>()
  for (const e of events) {
    switch (e.type) {
      case 'InvestigationStarted':
        total = e.data.settings.budget_total
        break
      case 'BudgetToppedUp':
        total += e.data.amount
        break
      case 'BudgetReserved':
        open.set(e.data.reservation_id, e.data.amount)
        held += e.data.amount
        break
      case 'BudgetConsumed':
        held -= open.get(e.data.reservation_id) ?? e.data.amount
        open.delete(e.data.reservation_id)
        consumed += e.data.amount
        break
      case 'BudgetReleased':
        held -= open.get(e.data.reservation_id) ?? e.data.amount
        open.delete(e.data.reservation_id)
        break
      default:
        continue
    }
    out.push({ seq: e.seq, total, reserved: held, consumed })
  }
  return out
}

export const budgetChart = (points: readonly BudgetPoint[]): string => {
  if (points.length === 0) return '<p class="muted">No investigation budget was used.</p>'
  const W = 640
  const H = 180
  const pad = 34
  const max = Math.max(1, ...points.map((p) => p.total))
  const x = (i: number): number => pad + (points.length === 1 ? 0 : (i * (W - 2 * pad)) / (points.length - 1))
  const y = (v: number): number => H - pad + 10 - (v * (H - pad - 10)) / max
  const line = (f: (p: BudgetPoint) => number): string =>
    points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(f(p)).toFixed(1)}`).join(' ')
  const left = (p: BudgetPoint): number => p.total - p.consumed - p.reserved
  const last = points[points.length - 1] as BudgetPoint
  return `<svg role="img" aria-label="budget over the investigation: reserved, consumed and left" viewBox="0 0 ${W} ${H}" width="100%" style="max-width:${W}px">
<line x1="${pad}" y1="${y(0)}" x2="${W - pad}" y2="${y(0)}" stroke="#d8dde6"/><line x1="${pad}" y1="${y(max)}" x2="${W - pad}" y2="${y(max)}" stroke="#d8dde6" stroke-dasharray="3 3"/>
<text x="4" y="${y(0) + 4}">0</text><text x="4" y="${y(max) + 4}">${max}</text>
<path d="${line((p) => p.consumed)}" fill="none" stroke="#b3261e" stroke-width="2"/><path d="${line((p) => p.reserved)}" fill="none" stroke="#8a5a00" stroke-width="2" stroke-dasharray="5 3"/><path d="${line(left)}" fill="none" stroke="#13733b" stroke-width="2"/>
<text x="${pad}" y="${H - 4}">seq ${points[0]?.seq ?? 0}</text><text x="${W - pad}" y="${H - 4}" text-anchor="end">seq ${last.seq}</text>
</svg><p class="muted"><span style="color:#b3261e">━ consumed ${last.consumed}</span> · <span style="color:#8a5a00">┅ reserved ${last.reserved}</span> · <span style="color:#13733b">━ left ${left(last)}</span> of ${last.total}</p>`
}

// --- the page ------------------------------------------------------------------------------------
