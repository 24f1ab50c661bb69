/**
 * Database values and filters as text: a value exactly (NULL as NULL, text quoted only where it
 * could be misread), filters as a WHERE clause. Shared by the query kinds' texts, the prompt's
 * capture text and the case report. They are the frozen v1 capture text's own (never edited, so
 * these texts cannot drift from it); a current text that should show values otherwise gets its
 * own function here. Pure.
 */
export { cell, where } from './prompt-v1/capture-text.js'
