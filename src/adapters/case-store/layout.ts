/** File names of a case package (format version 1) and of the store's transient files. */
export const DECLARATION_FILE = 'case.json'
export const LOG_FILE = 'events.jsonl'
export const HEAD_FILE = 'HEAD'
export const OBJECTS_DIR = 'objects'
/** Present only while a writer holds the case. Never part of an export. */
export const LOCK_FILE = '.vba-lock'
/** Present while a process advances the case (vba investigate): who and since when. Never part of an export. */
export const RUN_FILE = '.vba-run'
/** Prefix of temporary files; leftovers after a crash are harmless and reported as notices. */
export const TEMP_PREFIX = '.vba-tmp-'
/** The queue row of the case as of one head (a listing's shortcut, checked against HEAD). Never part of an export. */
export const SUMMARY_FILE = '.vba-summary'
