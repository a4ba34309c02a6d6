import { Browser, chromium } from 'playwright-core';
import { CHROMIUM } from './browser-path';

export { CHROMIUM };

/**
 * The browser suites' describe: skipped when global-setup.ts found no chromium (it said so, with how
 * to install it, at the top of the run); under CI=true a skip fails the run, as .ci/run counts them.
 */
export const describeWithBrowser = process.env.TRENDHOOKS_TEST_BROWSER === '0' ? describe.skip : describe;

/** A headless chromium that reaches nothing but the test's own servers (no background or update traffic, no QUIC). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
