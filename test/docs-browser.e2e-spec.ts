import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { describeWithBrowser, launchChromium } from './support/browser';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';

/**
 * `/docs` in a real headless browser (Debian's chromium, installed by .ci/run): the routes and the
 * receiver's contract (the OpenAPI `webhooks` section, each trend kind's payload) must render, not
 * just be present in the JSON. A screenshot per database goes to test/artifacts/.
 */
const ARTIFACTS = path.resolve(__dirname, 'artifacts');

describeWithBrowser.each(testDatabases())('/docs in a headless browser (%s)', (name, db) => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(db());
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders the routes and each trend kind\'s webhook payload, offline', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Nothing but this server: /docs must not need a CDN.
    const foreign: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(base) || url.startsWith('data:')) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    await page.goto(`${base}/docs`, { waitUntil: 'load' });
    await page.locator('.opblock-summary-path', { hasText: '/v1/webhooks' }).first().waitFor({ timeout: 30_000 });
    const paths = await page.locator('.opblock-summary-path').allInnerTexts();
    expect(paths).toEqual(expect.arrayContaining(['/v1/webhooks', '/v1/webhooks/{webhook_id}', '/v1/webhooks/{webhook_id}/recover', '/v1/events', '/v1/subreddits/{subreddit}/posts']));
    // The failure lifecycle: PATCH on a webhook is listed with its method.
    const methods = await page.locator('.opblock-summary').allInnerTexts();
    expect(methods.some((m) => /PATCH\s*\/v1\/webhooks\/\{webhook_id\}/.test(m))).toBe(true);

    // swagger-ui renders OpenAPI 3.1 `webhooks` as operations named by the webhook key.
    for (const kind of ['trends.surge', 'trends.velocity', 'trends.rising', 'webhook.disabled']) {
      await expect(page.getByText(kind, { exact: false }).first().isVisible()).resolves.toBe(true);
    }
    // Open the surge delivery: its signature headers and its payload example render.
    await page.locator('.opblock', { hasText: 'trends.surge' }).first().locator('.opblock-summary').click();
    const surge = page.locator('.opblock.is-open', { hasText: 'trends.surge' }).first();
    await surge.getByText('webhook-signature').first().waitFor({ timeout: 10_000 });
    await expect(surge.innerText()).resolves.toMatch(/window_buckets/);
    // The schemas of the three bodies are listed too.
    for (const schema of ['SurgeEvent', 'VelocityEvent', 'RisingEvent', 'WebhookDisabledEvent']) {
      await expect(page.locator('.models').getByText(schema, { exact: true }).first().isVisible()).resolves.toBe(true);
    }
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `docs-${name}.png`), fullPage: true });
    expect(foreign).toEqual([]);
  }, 90_000);
});
