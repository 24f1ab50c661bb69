#!/usr/bin/env node
/** Entry point of the `vba` binary as tsc emits it (the package's bin is the bundle: cli/bin.ts). */
import { start } from './start.js'

await start()
