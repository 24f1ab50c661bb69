/** The library's version, as recorded in case declarations and bags. */
export const VERSION = '0.1.0'
