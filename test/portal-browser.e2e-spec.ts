import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from './support/browser';
import { PrivateDestinationsService } from '../src/auth/private-destinations.service';
import { EventsService } from '../src/delivery/events.service';
import { EVENT_CATALOGUE, EVENT_KINDS } from '../src/events/catalogue';
import { testDatabases } from './support/databases';
import { ShiftedClock, startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, TestCert } from './support/receiver';

/**
 * The customer portal in a real headless browser (Debian's chromium, as the /docs test): a link
 * minted by the API opens the customer's webhooks (not another's), retries a failed delivery that
 * then reaches a real HTTPS receiver on 127.0.0.1, disables the webhook; a used or expired link
 * shows no data. Screenshots at desktop and phone width go to test/artifacts/.
 */
const ARTIFACTS = path.resolve(__dirname, 'artifacts');

describeWithBrowser.each(testDatabases())('the portal in a headless browser (%s)', (name, db) => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let cert: TestCert;
  let rx: Receiver;
  let failing = true;
  /** The /later receiver asks for its retry in an hour. */
  let later = true;
  // The receiver's text, never shown: answers of a private destination keep no excerpt.
  const clock = new ShiftedClock();

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
    rx.behaviour = (r) =>
      r.path === '/later' && later ? { status: 503, headers: { 'retry-after': '3600' } } : failing ? { status: 503, body: 'receiver down for maintenance' } : { status: 200 };
    t = await startTestApp(db(), { clock, env: { DELIVERY_CA_FILE: cert.caFile, DELIVERY_RETRY_SCHEDULE: '0.1', DELIVERY_POLL_INTERVAL_MS: '50', DELIVERY_TIMEOUT_MS: '1000' } });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await rx?.close();
  });

  /** A link minted over HTTP by POST /v1/portal/sessions, as a customer's backend would. */
  async function mintLink(auth: Record<string, string>, body: object = {}): Promise<string> {
    const res = await fetch(`${base}/v1/portal/sessions`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { data: { url: string } }).data.url;
  }

  /** A page that may reach this server only: the portal needs nothing from elsewhere. */
  async function offlinePage(width: number, height: number): Promise<{ page: Page; foreign: string[] }> {
    const page = await browser.newPage({ viewport: { width, height } });
    const foreign: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(base)) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    return { page, foreign };
  }

  it("shows the customer's webhooks, retries a failed delivery to a real receiver, disables the webhook", async () => {
    const a = await t.customer();
    const b = await t.customer();
    await t.app.get(PrivateDestinationsService).allow(a.customerId, `127.0.0.1/32:${rx.port}`);
    const subA = `porta${Date.now().toString(36)}`;
    const subB = `portb${Date.now().toString(36)}`;
    const hookA = (await t.http().post('/v1/webhooks').set(a.auth).send({ url: rx.namedUrl('/a'), event: 'trends.surge', subreddit: subA, allow_nonstandard_port: true }).expect(201)).body.data;
    await t.http().post('/v1/webhooks').set(b.auth).send({ url: 'https://hooks.example.com/b', event: 'trends.surge', subreddit: subB }).expect(201);

    // One delivery that fails for good (503 twice: one retry scheduled).
    await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit: subA, data: { count: 1 } });
    let failed: { id: string } | undefined;
    for (let i = 0; i < 200 && !failed; i++) {
      const res = await t.http().get(`/v1/webhooks/${hookA.id}/deliveries`).set(a.auth).expect(200);
      failed = res.body.data.find((d: { state: string }) => d.state === 'failed');
      if (!failed) await new Promise((r) => setTimeout(r, 50));
    }
    expect(failed).toBeDefined();
    const before = rx.received.length;

    const url = await mintLink(a.auth);
    const { page, foreign } = await offlinePage(1280, 900);
    await page.goto(url, { waitUntil: 'load' });
    const card = page.locator(`article[data-webhook-id="${hookA.id}"]`);
    await card.waitFor({ timeout: 15_000 });
    // The token left the address bar at once.
    expect(page.url()).toBe(`${base}/portal`);
    await expect(page.getByText(`r/${subA}`).count()).resolves.toBe(1);
    await expect(page.getByText(`r/${subB}`).count()).resolves.toBe(0);
    await expect(card.locator('.state').innerText()).resolves.toBe('enabled');
    // The receiver contract of this webhook's own kind: the catalogue example, as delivered.
    const receiver = card.locator('details.receiver');
    await expect(receiver.getAttribute('data-kind')).resolves.toBe('trends.surge');
    await receiver.locator('summary').click();
    const surgeBody = JSON.parse(await receiver.locator('pre.example-body').innerText());
    expect(surgeBody).toEqual(EVENT_CATALOGUE['trends.surge'].example);
    await expect(receiver.locator('pre.example-headers').innerText()).resolves.toMatch(/^webhook-signature: v1,/m);

    // Its deliveries: the failed one with both attempts (503 and the receiver's text).
    await card.getByRole('button', { name: 'Deliveries' }).click();
    const item = card.locator(`li[data-delivery-id="${failed!.id}"]`);
    await item.waitFor();
    await expect(item.locator('.badge').innerText()).resolves.toBe('failed');
    await expect(item.locator('tr.attempt').count()).resolves.toBe(2);
    await expect(item.locator('td.code').first().innerText()).resolves.toBe('503');
    // No response excerpt: the receiver is a private destination, whose answers are never kept.
    await expect(item.locator('td.excerpt').first().innerText()).resolves.toBe('');
    // Local time shown, UTC on hover.
    await expect(item.locator('time').first().getAttribute('title')).resolves.toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `portal-desktop-${name}.png`), fullPage: true });

    // Retry: a new attempt reaches the receiver, and the log shows it delivered.
    failing = false;
    await item.getByRole('button', { name: 'Retry' }).click();
    await rx.waitUntil((r) => r.length > before && r.slice(before).some((x) => x.path === '/a'), 15_000, 'the retried delivery');
    const delivered = async () => {
      await card.getByRole('button', { name: 'Deliveries' }).click();
      return card.locator(`li[data-delivery-id="${failed!.id}"] .badge`).innerText();
    };
    let badge = await delivered();
    for (let i = 0; i < 50 && badge !== 'delivered'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      badge = await delivered();
    }
    expect(badge).toBe('delivered');
    await expect(card.locator(`li[data-delivery-id="${failed!.id}"] tr.attempt`).count()).resolves.toBe(3);
    await expect(card.locator(`li[data-delivery-id="${failed!.id}"] td.code`).first().innerText()).resolves.toBe('200');

    // Disable, by keyboard: the state shows it.
    await card.getByRole('button', { name: 'Disable' }).focus();
    await page.keyboard.press('Enter');
    const fresh = page.locator(`article[data-webhook-id="${hookA.id}"]`);
    await fresh.getByRole('button', { name: 'Enable' }).waitFor();
    await expect(fresh.locator('.state').innerText()).resolves.toBe('disabled (manual)');
    const api = await t.http().get(`/v1/webhooks/${hookA.id}`).set(a.auth).expect(200);
    expect(api.body.data).toMatchObject({ disabled: true, disabled_reason: 'manual' });

    // Phone width: the same page, readable.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(ARTIFACTS, `portal-phone-${name}.png`), fullPage: true });
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow as number).toBeLessThanOrEqual(0);
    expect(foreign).toEqual([]);

    // The same link a second time: used, no data.
    const { page: again } = await offlinePage(1280, 900);
    await again.goto(url, { waitUntil: 'load' });
    await again.getByRole('heading', { name: 'This link has expired' }).waitFor();
    await expect(again.locator('article.webhook').count()).resolves.toBe(0);
    await again.close();
    await page.close();
  }, 120_000);

  it('shows when a pending delivery is next tried and retries it now; Disable holds what is pending, Enable sends it and offers to recover the pause', async () => {
    const a = await t.customer();
    await t.app.get(PrivateDestinationsService).allow(a.customerId, `127.0.0.1/32:${rx.port}`);
    const sub = `portl${Date.now().toString(36)}`;
    const hook = (await t.http().post('/v1/webhooks').set(a.auth).send({ url: rx.namedUrl('/later'), event: 'trends.surge', subreddit: sub, allow_nonstandard_port: true }).expect(201)).body.data;
    const emit = () => t.app.get(EventsService).emit({ type: 'trends.surge', subreddit: sub, data: { count: 1 } });
    const deliveryOf = async (eventId: string) => {
      const res = await t.http().get(`/v1/webhooks/${hook.id}/deliveries`).set(a.auth).expect(200);
      return res.body.data.find((d: { event_id: string }) => d.event_id === eventId) as { id: string; state: string; attempt_count: number; next_attempt_at: string | null } | undefined;
    };
    const waitFor = async (eventId: string, state: string) => {
      for (let i = 0; i < 200; i++) {
        const d = await deliveryOf(eventId);
        if (d?.state === state && d.attempt_count > 0) return d;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`delivery of ${eventId} never ${state}`);
    };
    later = true;
    const first = await emit();
    const waiting = await waitFor(first.event_id, 'pending');
    expect(waiting.next_attempt_at).not.toBeNull();

    const { page, foreign } = await offlinePage(1280, 900);
    page.on('dialog', (d) => void d.accept());
    await page.goto(await mintLink(a.auth), { waitUntil: 'load' });
    const card = () => page.locator(`article[data-webhook-id="${hook.id}"]`);
    await card().waitFor({ timeout: 15_000 });
    await card().getByRole('button', { name: 'Deliveries' }).click();
    const item = card().locator(`li[data-delivery-id="${waiting.id}"]`);
    await item.waitFor();
    await expect(item.locator('.badge').innerText()).resolves.toBe('pending');
    // When it is next tried: the API's next_attempt_at, shown in local time.
    await expect(item.locator('.next-try time').getAttribute('datetime')).resolves.toBe(waiting.next_attempt_at);

    // Retry now: the API's retry, an hour early; the receiver gets it.
    later = false;
    const before = rx.received.length;
    await item.getByRole('button', { name: 'Retry now' }).click();
    await rx.waitUntil((r) => r.slice(before).some((x) => x.path === '/later' && x.headers['webhook-id'] === waiting.id), 15_000, 'the delivery retried now');
    await waitFor(first.event_id, 'delivered');

    // Another retry waits an hour; Disable holds it, and the card says so.
    later = true;
    const second = await emit();
    const held = await waitFor(second.event_id, 'pending');
    await card().getByRole('button', { name: 'Disable' }).click();
    await card().getByRole('button', { name: 'Enable' }).waitFor();
    await expect(card().locator('.disabled-deliveries').innerText()).resolves.toBe('held: sent when you enable it');
    expect((await deliveryOf(second.event_id))?.state).toBe('held');
    await card().getByRole('button', { name: 'Deliveries' }).click();
    await expect(card().locator(`li[data-delivery-id="${held.id}"] .next-try`).innerText()).resolves.toContain('held until the webhook is enabled');
    // An event of the pause: no delivery, offered for recovery on Enable.
    const missed = await emit();

    later = false;
    const sent = rx.received.length;
    await card().getByRole('button', { name: 'Enable' }).click();
    await card().getByRole('button', { name: 'Disable' }).waitFor();
    const out = card().locator(':scope > .output');
    await expect(out.innerText()).resolves.toMatch(/^Enabled: 1 held delivery sent again\. 1 event missed while disabled can be sent again\./);
    await rx.waitUntil((r) => r.slice(sent).some((x) => x.headers['webhook-id'] === held.id), 15_000, 'the held delivery');
    await out.getByRole('button', { name: 'Recover 1' }).click();
    await out.getByText('1 queued.').waitFor();
    await waitFor(missed.event_id, 'delivered');
    expect(foreign).toEqual([]);
    await page.close();
  }, 120_000);

  it('an expired link shows no data', async () => {
    const a = await t.customer();
    await t.http().post('/v1/webhooks').set(a.auth).send({ url: 'https://hooks.example.com/x', event: 'trends.surge', subreddit: 'expiredlink' }).expect(201);
    const url = await mintLink(a.auth);
    clock.offsetMs += 3600_000 + 1000;
    const { page } = await offlinePage(1280, 900);
    await page.goto(url, { waitUntil: 'load' });
    await page.getByRole('heading', { name: 'This link has expired' }).waitFor();
    await expect(page.locator('article.webhook').count()).resolves.toBe(0);
    await expect(page.getByText('expiredlink').count()).resolves.toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, `portal-expired-${name}.png`) });
    await page.close();
  }, 60_000);

  it("creates (the API's SSRF refusal shown), sends a test event, filters, counts a recover, rotates and deletes, by the page's own controls", async () => {
    const a = await t.customer();
    const sub = `portc${Date.now().toString(36)}`;
    const hook = (await t.http().post('/v1/webhooks').set(a.auth).send({ url: 'https://hooks.example.com/c', event: 'trends.surge', subreddit: sub }).expect(201)).body.data;
    const { page, foreign } = await offlinePage(1280, 900);
    page.on('dialog', (d) => void d.accept());
    await page.goto(await mintLink(a.auth), { waitUntil: 'load' });
    const card = page.locator(`article[data-webhook-id="${hook.id}"]`);
    await card.waitFor({ timeout: 15_000 });

    // Create: a private address is refused with the API's own message; a public one is created, its secret shown once.
    await page.getByLabel('URL', { exact: true }).fill('https://internal.example.com/hook');
    await page.getByLabel('Subreddit').fill('typescript');
    await page.getByRole('button', { name: 'Create' }).click();
    const out = page.locator('form.create .output');
    await out.getByText(/^WEBHOOK_DESTINATION_BLOCKED: .*10\.0\.0\.5/).waitFor();
    await page.getByLabel('URL', { exact: true }).fill('https://hooks.example.com/new');
    await page.getByLabel('Event').selectOption('trends.rising');
    await page.getByRole('button', { name: 'Create' }).click();
    await out.locator('code.secret').waitFor();
    await expect(out.locator('code.secret').innerText()).resolves.toMatch(/^whsec_/);
    await expect(page.locator('article.webhook').count()).resolves.toBe(2);
    // The new webhook's card shows its own kind's example (trends.rising), not the surge one.
    const rising = page.locator('article.webhook').first().locator('details.receiver');
    await expect(rising.getAttribute('data-kind')).resolves.toBe('trends.rising');
    await rising.locator('summary').click();
    expect(JSON.parse(await rising.locator('pre.example-body').innerText())).toEqual(EVENT_CATALOGUE['trends.rising'].example);

    // A test event, then its delivery under the state filter.
    await card.getByRole('button', { name: 'Send test event' }).click();
    await card.locator('.output', { hasText: 'Test event queued' }).waitFor();
    await card.getByRole('button', { name: 'Deliveries' }).click();
    await card.locator('li.delivery').first().waitFor();
    await card.getByLabel('Show').selectOption('delivered');
    await card.locator('li.delivery, p', { hasText: /No deliveries|delivered/ }).first().waitFor();
    const shown = await card.locator('li.delivery .badge').allInnerTexts();
    expect(shown.every((b) => b === 'delivered')).toBe(true);

    // Recover: the dry-run count first.
    // More than 14 days: the API's refusal, shown beside the form.
    const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await card.getByLabel('Recover from').fill(local(new Date(Date.now() - 20 * 86_400_000)));
    await card.getByRole('button', { name: 'Count (dry run)' }).click();
    await card.locator('.output [role=alert]', { hasText: /^VALIDATION_ERROR: / }).waitFor();
    await card.getByLabel('Recover from').fill(local(new Date(Date.now() - 3600_000)));
    await card.getByRole('button', { name: 'Count (dry run)' }).click();
    await card.locator('.output', { hasText: /would be sent again/ }).waitFor();
    await expect(card.locator('.output').innerText()).resolves.toMatch(/^\d+ events? would be sent again/);

    // Rotate: the new secret shown once.
    await card.getByRole('button', { name: 'Rotate secret' }).click();
    await card.locator('.output code.secret').waitFor();
    await expect(card.locator('.output code.secret').innerText()).resolves.toMatch(/^whsec_/);

    // Delete.
    await card.getByRole('button', { name: 'Delete' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await t.http().get(`/v1/webhooks/${hook.id}`).set(a.auth)).status).toBe(404);
    expect(foreign).toEqual([]);
    await page.close();
  }, 90_000);

  it('pages the webhook list with the API cursors, shows every kind\'s contract, and signs out for good', async () => {
    const a = await t.customer();
    const tag = `portp${Date.now().toString(36)}`;
    const ids: string[] = [];
    for (let i = 0; i < 52; i++) {
      ids.push((await t.http().post('/v1/webhooks').set(a.auth).send({ url: `https://hooks.example.com/p${i}`, event: 'trends.velocity', subreddit: `${tag}${i}` }).expect(201)).body.data.id);
    }
    const { page, foreign } = await offlinePage(1280, 900);
    await page.goto(await mintLink(a.auth), { waitUntil: 'load' });
    await page.locator('article.webhook').first().waitFor({ timeout: 15_000 });
    const shownIds = () => page.locator('article.webhook').evaluateAll((els) => els.map((e) => e.getAttribute('data-webhook-id')));
    const first = await shownIds();
    expect(first).toHaveLength(50);
    await expect(page.getByRole('button', { name: 'Previous webhooks' }).count()).resolves.toBe(0);

    await page.getByRole('button', { name: 'Next webhooks' }).click();
    // The page's CSP forbids string evaluation (waitForFunction): wait on the list itself.
    await page.locator('article.webhook').nth(2).waitFor({ state: 'detached' });
    const second = await shownIds();
    expect(new Set([...first, ...second])).toEqual(new Set(ids));
    await expect(page.getByRole('button', { name: 'Next webhooks' }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Previous webhooks' }).click();
    await page.locator('article.webhook').nth(49).waitFor();
    expect(await shownIds()).toEqual(first);

    // Each kind's example, served by trendhooks itself.
    for (const kind of EVENT_KINDS) {
      const body = await page.locator(`section.kind[data-kind="${kind}"] pre.example-body`).innerText();
      expect(JSON.parse(body)).toEqual(EVENT_CATALOGUE[kind].example);
    }
    await expect(page.locator('article.webhook').first().locator('details.receiver').getAttribute('data-kind')).resolves.toBe('trends.velocity');

    // Sign out: the page says so, and the same browser's cookie no longer works.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    await expect(page.locator('article.webhook').count()).resolves.toBe(0);
    const status = await page.evaluate(async () => (await fetch('/v1/webhooks', { headers: { 'X-Trendhooks-Portal': '1' }, credentials: 'same-origin' })).status);
    expect(status).toBe(401);
    expect(foreign).toEqual([]);
    await page.close();
  }, 90_000);

  it('works behind a proxy that mounts trendhooks under a path (PORTAL_BASE_URL with a prefix)', async () => {
    // A reverse proxy serving trendhooks at /th/ (the prefix stripped on the way in), as a host's gateway would.
    let target = '';
    const proxy = http.createServer((req, res) => {
      if (!req.url?.startsWith('/th/')) {
        res.writeHead(404).end('not under /th/');
        return;
      }
      const up = http.request(`${target}${req.url.slice(3)}`, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const front = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const behind = await startTestApp(db(), { env: { PORTAL_BASE_URL: `${front}/th` } });
    try {
      await behind.app.listen(0, '127.0.0.1');
      target = `http://127.0.0.1:${(behind.app.getHttpServer().address() as AddressInfo).port}`;
      const a = await behind.customer();
      const hook = (await behind.http().post('/v1/webhooks').set(a.auth).send({ url: 'https://hooks.example.com/th', event: 'trends.surge', subreddit: 'prefixed' }).expect(201)).body.data;
      const minted = await fetch(`${front}/th/v1/portal/sessions`, { method: 'POST', headers: { ...a.auth, 'Content-Type': 'application/json' }, body: '{}' });
      expect(minted.status).toBe(201);
      const url = ((await minted.json()) as { data: { url: string } }).data.url;
      expect(url.startsWith(`${front}/th/portal#token=`)).toBe(true);

      const page = await browser.newPage();
      const foreign: string[] = [];
      await page.route('**/*', (route) => {
        const u = route.request().url();
        if (u.startsWith(`${front}/th/`)) return route.continue();
        foreign.push(u);
        return route.abort();
      });
      await page.goto(url, { waitUntil: 'load' });
      const card = page.locator(`article[data-webhook-id="${hook.id}"]`);
      await card.waitFor({ timeout: 15_000 });
      await card.getByRole('button', { name: 'Disable' }).click();
      await page.locator(`article[data-webhook-id="${hook.id}"]`).getByRole('button', { name: 'Enable' }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Signed out' }).waitFor();
      const status = await page.evaluate(async () => (await fetch('v1/webhooks', { headers: { 'X-Trendhooks-Portal': '1' } })).status);
      expect(status).toBe(401);
      expect(foreign).toEqual([]);
      await page.close();
    } finally {
      await behind.close();
      await new Promise((r) => proxy.close(r));
    }
  }, 90_000);
  it("names the customer whose portal it is, and asks before a link of another customer replaces it", async () => {
    const a = await t.customer();
    const b = await t.customer();
    const local = (url: string) => `${base}/portal${new URL(url).hash}`;
    const { page } = await offlinePage(1000, 700);
    await page.goto(local(await mintLink(a.auth)), { waitUntil: 'load' });
    await page.locator('#whose').filter({ hasText: a.customerId }).waitFor({ timeout: 15_000 });
    expect(await page.locator('#whose').innerText()).toMatch(new RegExp(`^Portal of customer-\\S+ \\(${a.customerId}\\)$`));

    // B's link while A's session is live: the page asks; declined, it stays A's.
    const asked: string[] = [];
    let answer = false;
    page.on('dialog', (d) => {
      asked.push(d.message());
      void (answer ? d.accept() : d.dismiss());
    });
    await page.goto('about:blank');
    await page.goto(local(await mintLink(b.auth)), { waitUntil: 'load' });
    await page.locator('#whose').filter({ hasText: a.customerId }).waitFor({ timeout: 15_000 });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(a.customerId);
    expect(asked[0]).toContain(b.customerId);

    // Accepted: B's portal, named so.
    answer = true;
    await page.goto('about:blank');
    await page.goto(local(await mintLink(b.auth)), { waitUntil: 'load' });
    await page.locator('#whose').filter({ hasText: b.customerId }).waitFor({ timeout: 15_000 });
    expect(asked).toHaveLength(2);
    await page.close();
  }, 90_000);
});
