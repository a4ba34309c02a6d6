import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { describeWithBrowser, launchChromium } from './support/browser';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';

/**
 * The portal framed by a host page of another site (PORTAL_FRAME_ANCESTORS): the page loads and
 * shows the customer's webhooks inside the iframe (its session cookie is partitioned, since a
 * Strict one is withheld there); a site not listed cannot frame it.
 */

describeWithBrowser.each(testDatabases())('the portal in an iframe of another site (%s)', (_name, db) => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let hostPage: http.Server;
  let hostOrigin: string;
  let frameSrc = '';

  beforeAll(async () => {
    // The host app's page, on another site (localhost, not 127.0.0.1), framing the link it was given.
    hostPage = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!DOCTYPE html><title>host</title><h1>Host app</h1><iframe id="portal" title="Webhooks" src="${frameSrc}" width="1000" height="700"></iframe>`);
    });
    await new Promise<void>((r) => hostPage.listen(0, '127.0.0.1', r));
    hostOrigin = `http://localhost:${(hostPage.address() as AddressInfo).port}`;
    t = await startTestApp(db(), { env: { PORTAL_FRAME_ANCESTORS: hostOrigin } });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((r) => hostPage?.close(r));
  });

  async function link(auth: Record<string, string>): Promise<string> {
    const res = await t.http().post('/v1/portal/sessions').set(auth).send({});
    expect(res.status).toBe(201);
    return `${base}/portal${new URL(res.body.data.url).hash}`;
  }

  it('works framed by the configured origin', async () => {
    const a = await t.customer();
    const w = (await t.http().post('/v1/webhooks').set(a.auth).send({ url: 'https://hooks.example.com/e', event: 'trends.surge', subreddit: 'embedded' }).expect(201)).body.data;
    frameSrc = await link(a.auth);
    const page = await browser.newPage();
    await page.goto(`${hostOrigin}/`, { waitUntil: 'load' });
    const frame = page.frameLocator('#portal');
    await frame.locator(`article[data-webhook-id="${w.id}"]`).waitFor({ timeout: 15_000 });
    await expect(frame.locator(`article[data-webhook-id="${w.id}"] .state`).innerText()).resolves.toBe('enabled');
    // The session works for the page's later calls too (the cookie was kept in the frame's partition).
    await frame.locator(`article[data-webhook-id="${w.id}"]`).getByRole('button', { name: 'Disable' }).click();
    await frame.locator(`article[data-webhook-id="${w.id}"]`).getByRole('button', { name: 'Enable' }).waitFor();
    const res = await t.http().get('/portal').expect(200);
    expect(res.headers['content-security-policy']).toMatch(new RegExp(`frame-ancestors ${hostOrigin}$`));
    await page.close();
  }, 60_000);

  it('is refused in a frame of a site not listed', async () => {
    const a = await t.customer();
    await t.http().post('/v1/webhooks').set(a.auth).send({ url: 'https://hooks.example.com/f', event: 'trends.surge', subreddit: 'notlisted' }).expect(201);
    const other = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<iframe id="portal" src="${frameSrc}"></iframe>`));
    frameSrc = await link(a.auth);
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    try {
      const page = await browser.newPage();
      await page.goto(`http://localhost:${(other.address() as AddressInfo).port}/`, { waitUntil: 'load' });
      // Chromium replaces a frame its CSP refuses with an error page: the portal never runs there.
      let framed = page.frames().find((f) => f !== page.mainFrame());
      for (let i = 0; i < 50 && !framed?.url().startsWith('chrome-error:'); i++) {
        await page.waitForTimeout(100);
        framed = page.frames().find((f) => f !== page.mainFrame());
      }
      expect(framed?.url()).toMatch(/^chrome-error:/);
      await page.close();
    } finally {
      await new Promise((r) => other.close(r));
    }
  }, 60_000);
});
