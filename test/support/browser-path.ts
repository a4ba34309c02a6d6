/** Where the browser suites find their browser: apart from browser.ts, which global-setup.ts (no jest globals there) cannot load.
 * Debian's chromium (`.ci/run` installs it): the browser suites drive it through playwright-core, no download. */
export const CHROMIUM = '/usr/bin/chromium';

/** How to get the browser, said once at the top of a run that lacks it (global-setup.ts). */
export const MISSING_BROWSER = `the browser suites (test/docs-browser, portal-browser, portal-embed) need Debian's chromium at ${CHROMIUM}: apt-get install chromium`;
