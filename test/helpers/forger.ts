/** The forger lives in the library's ./testing entry (src/testing/forger.ts); tests import it here. */
export { forger, type Forger, type ForgedEvent } from '../../src/testing/forger.js'
