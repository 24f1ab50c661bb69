/**
 * A real Chromium for the tests that look at what people see: Debian's chromium where it is
 * installed (or the one VBA_CHROMIUM names), else the Chromium build the npm package
 * @sparticuz/chromium ships (unpacked on first use, offline), so `npm ci && npm test` needs no apt
 * step for a browser. Either is driven by playwright-core with the network-quiet flags.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

const DEBIAN_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run'
]

/** Which browser the tests use, for their messages. */
export const browserSource = (): string => {
  const named = process.env['VBA_CHROMIUM'] ?? '/usr/bin/chromium'
  return existsSync(named) ? named : '@sparticuz/chromium (npm)'
}

/** Launches the system's chromium, or the packaged one. */
export const launchChromium = async (): Promise<Browser> => {
  const named = process.env['VBA_CHROMIUM'] ?? '/usr/bin/chromium'
  if (existsSync(named)) return chromium.launch({ executablePath: named, args: DEBIAN_FLAGS })
  const packaged = (await import('@sparticuz/chromium')).default
  // Its flags are made for one page per process (serverless); the tests open several contexts.
  const args = packaged.args.filter((a) => a !== '--single-process' && a !== '--no-zygote')
  return chromium.launch({
    executablePath: await packaged.executablePath(),
    args: [...args, ...DEBIAN_FLAGS.filter((f) => !args.includes(f))],
    headless: true
  })
}
