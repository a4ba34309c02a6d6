import { Browser, chromium } from 'playwright-core';

/** Debian's chromium (`.ci/run` installs it): the browser suites drive it through playwright-core, no download. */
export const CHROMIUM = '/usr/bin/chromium';

/** A headless chromium that reaches nothing but the test's own servers (no background or update traffic, no QUIC). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
