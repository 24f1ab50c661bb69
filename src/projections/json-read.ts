/** Tolerant readers of decoded JSON for the views that render captures (text for the model, HTML for people). */
export type Rec = Readonly<Record<string, unknown>>

/** The value as a record, or an empty one. */
export const asRec = (u: unknown): Rec => (typeof u === 'object' && u !== null && !Array.isArray(u) ? (u as Rec) : {})

/** The value as an array, or an empty one. */
export const asArr = (u: unknown): readonly unknown[] => (Array.isArray(u) ? u : [])
