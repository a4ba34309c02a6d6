// The customer portal's page: plain TypeScript, compiled at build time (src/portal/page/tsconfig.json)
// into dist/portal/page/portal.js. No library: a few tables and forms over the webhook API need none,
// and the page then has no dependency to audit or update. Every call is the public REST API, with
// the session cookie the link was exchanged for and the portal header (the CSRF defence).

interface Envelope<T> { data: T; meta: { page: { next_cursor: string | null } | null } }
interface ApiErr { error: { code: string; message: string } }
interface Webhook {
  id: string; url: string; event: string; subreddit: string; last_status: string | null; last_delivery_at: string | null;
  last_response_code: number | null; success_rate_24h: number | null; disabled: boolean; disabled_reason: string | null; secret?: string;
  disabled_deliveries: 'held' | 'cancelled' | null; resumed: Resumed | null;
}
/** What a PATCH that enabled the webhook did: held deliveries released, and the recover it offers. */
interface Resumed { released: number; expired: number; recover: { since: string; until: string; queued: number | null } | null }
interface Attempt { attempt: number; started_at: string; duration_ms: number; status_code: number | null; outcome: string; error_class: string | null; response_excerpt: string | null }
interface KindContract { kind: string; summary: string; body: string; headers: Record<string, string> }
interface Contract { kinds: KindContract[]; example_secret: string; verify: string[] }
interface Delivery { id: string; event_id: string; state: string; attempt_count: number; created_at: string; next_attempt_at: string | null; attempts: Attempt[]; last_error: string | null }

const SCOPE_KEY = 'trendhooks-portal-scope';

/**
 * The session's scope (not a secret: the cookie is the credential), kept across reloads in
 * sessionStorage. A page framed by another site may be denied storage: then in memory only, and a
 * reload shows the expired page.
 */
const memory = new Map<string, string>();
const store = {
  get(k: string): string | null {
    try { return sessionStorage.getItem(k); } catch { return memory.get(k) ?? null; }
  },
  set(k: string, v: string): void {
    try { sessionStorage.setItem(k, v); } catch { memory.set(k, v); }
  },
  remove(k: string): void {
    try { sessionStorage.removeItem(k); } catch { memory.delete(k); }
  },
};
const app = document.getElementById('app') as HTMLElement;
const scopeLine = document.getElementById('scope') as HTMLElement;
const whoseLine = document.getElementById('whose') as HTMLElement;

class Expired extends Error {}
class ApiError extends Error {
  constructor(readonly code: string, message: string) { super(message); }
}

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T | null }> {
  const headers: Record<string, string> = { 'X-Trendhooks-Portal': '1', Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  const json = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401) throw new Expired();
  if (!res.ok) {
    const e = (json as ApiErr | null)?.error;
    throw new ApiError(e?.code ?? 'ERROR', e?.message ?? `HTTP ${res.status}`);
  }
  return { status: res.status, body: json as T };
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string | null)[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) if (c !== null) e.append(c);
  return e;
}

function button(label: string, onClick: () => Promise<void> | void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = el('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', async () => {
    b.disabled = true;
    try { await onClick(); } catch (err) { handle(err, b); } finally { b.disabled = false; }
  });
  return b;
}

/** A time in the viewer's zone, the UTC instant on hover. */
function time(iso: string | null): HTMLElement | string {
  if (!iso) return '—';
  const d = new Date(iso);
  return el('time', { datetime: iso, title: d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') }, d.toLocaleString());
}

function notice(text: string, kind: 'error' | 'info' = 'info'): void {
  const box = document.getElementById('notice') ?? app.insertBefore(el('div', { id: 'notice', role: 'status' }), app.firstChild);
  box.className = kind;
  box.textContent = text;
}

/** An error shown beside the control that caused it (its webhook's output line), else at the top. */
function handle(err: unknown, near?: Element): void {
  if (err instanceof Expired) return expired();
  const text = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
  const out = near?.closest('article')?.querySelector(':scope > .output');
  if (out) {
    out.replaceChildren(el('span', { class: 'error', role: 'alert' }, text));
    return;
  }
  notice(text, 'error');
}

function expired(): void {
  store.remove(SCOPE_KEY);
  signOutButton.remove();
  scopeLine.textContent = '';
  whoseLine.textContent = '';
  app.replaceChildren(el('section', { class: 'expired', role: 'alert' }, el('h2', {}, 'This link has expired'), el('p', {}, 'Portal links work once and for a limited time. Ask for a new link to see your webhooks.')));
}

const scope = (): string | null => store.get(SCOPE_KEY) || null;

/** The receiver contract per kind, served by trendhooks (GET /portal/contract), read once. */
let contractData: Contract | null = null;
async function loadContract(): Promise<Contract> {
  contractData ??= (await api<Envelope<Contract>>('GET', 'portal/contract')).body!.data;
  return contractData;
}

/** Webhooks per page of the list; the API's cursors page through the rest. */
const PAGE_SIZE = 50;

async function loadWebhooks(cursor: string | null = null): Promise<void> {
  const only = scope();
  scopeLine.textContent = only ? `This link shows webhook ${only} only.` : '';
  const terms = await loadContract();
  let hooks: Webhook[];
  let next: string | null = null;
  let prev: string | null = null;
  if (only) {
    hooks = [(await api<Envelope<Webhook>>('GET', `v1/webhooks/${only}`)).body!.data];
  } else {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor) q.set('cursor', cursor);
    const page = (await api<Envelope<Webhook[]>>('GET', `v1/webhooks?${q}`)).body!;
    hooks = page.data;
    next = page.meta.page?.next_cursor ?? null;
    prev = (page.meta.page as { prev_cursor?: string | null } | null)?.prev_cursor ?? null;
  }
  const list = el('section', { 'aria-label': 'Webhooks' });
  for (const w of hooks) list.append(webhookCard(w));
  app.replaceChildren(list);
  if (next || prev) {
    app.append(el('nav', { class: 'pager', 'aria-label': 'Webhook pages' },
      prev ? button('Previous webhooks', () => loadWebhooks(prev)) : null,
      next ? button('Next webhooks', () => loadWebhooks(next)) : null,
    ));
  }
  if (!only) app.append(createForm());
  app.append(contract(terms));
}

function state(w: Webhook): string {
  return w.disabled ? `disabled (${w.disabled_reason ?? 'manual'})` : 'enabled';
}

function webhookCard(w: Webhook): HTMLElement {
  const card = el('article', { class: 'webhook', 'data-webhook-id': w.id, 'aria-labelledby': `h-${w.id}` });
  const rate = w.success_rate_24h === null ? '—' : `${Math.round(w.success_rate_24h * 1000) / 10}%`;
  card.append(
    el('h2', { id: `h-${w.id}` }, `${w.event} · r/${w.subreddit}`),
    el('dl', {},
      el('dt', {}, 'URL'), el('dd', { class: 'url' }, w.url),
      el('dt', {}, 'State'), el('dd', { class: `state ${w.disabled ? 'off' : 'on'}` }, state(w)),
      w.disabled_deliveries ? el('dt', {}, 'Pending deliveries') : null,
      w.disabled_deliveries ? el('dd', { class: 'disabled-deliveries' }, w.disabled_deliveries === 'held' ? 'held: sent when you enable it' : 'cancelled: enabling offers to recover them') : null,
      el('dt', {}, 'Last status'), el('dd', { class: 'last-status' }, `${w.last_status ?? '—'}${w.last_response_code ? ` (${w.last_response_code})` : ''}`),
      el('dt', {}, 'Last delivery'), el('dd', {}, time(w.last_delivery_at)),
      el('dt', {}, 'Success, 24 h'), el('dd', {}, rate),
      el('dt', {}, 'Id'), el('dd', { class: 'mono' }, w.id),
    ),
  );
  const out = el('div', { class: 'output', 'aria-live': 'polite' });
  const deliveries = el('div', { class: 'deliveries' });
  const actions = el('div', { class: 'actions' },
    button('Deliveries', () => showDeliveries(w, deliveries, '', null)),
    button('Send test event', async () => {
      const r = await api<Envelope<{ delivery_id: string }>>('POST', `v1/webhooks/${w.id}/test`);
      out.textContent = `Test event queued: delivery ${r.body!.data.delivery_id}.`;
    }),
    button(w.disabled ? 'Enable' : 'Disable', async () => {
      const r = await api<Envelope<Webhook>>('PATCH', `v1/webhooks/${w.id}`, { disabled: !w.disabled });
      card.replaceWith(webhookCard(r.body!.data));
    }),
    button('Rotate secret', async () => {
      if (!confirm('Rotate the signing secret? The old one keeps signing beside it for 24 h.')) return;
      const r = await api<Envelope<Webhook>>('POST', `v1/webhooks/${w.id}/rotate-secret`);
      out.replaceChildren('New secret (shown this once): ', el('code', { class: 'secret' }, r.body!.data.secret ?? ''));
    }),
    scope() ? null : button('Delete', async () => {
      if (!confirm(`Delete the webhook to ${w.url}? Its queued deliveries stop.`)) return;
      await api('DELETE', `v1/webhooks/${w.id}`);
      card.remove();
    }, { class: 'danger' }),
  );
  const terms = contractData?.kinds.find((k) => k.kind === w.event);
  if (w.resumed) showResumed(w, w.resumed, out);
  card.append(actions, recoverForm(w, out), out, deliveries);
  if (terms) card.append(el('details', { class: 'receiver', 'data-kind': terms.kind }, el('summary', {}, `What your receiver gets (${terms.kind})`), kindExample(terms), el('p', {}, 'How to verify the signature: see "What your receiver gets" below the list.')));
  return card;
}

/** After Enable: what it released, and the recover of what it missed, with the dry run's count. */
function showResumed(w: Webhook, r: Resumed, out: HTMLElement): void {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  out.replaceChildren(`Enabled: ${n(r.released, 'held delivery')} sent again${r.expired ? `; ${n(r.expired, 'held delivery')} older than 14 days cancelled` : ''}. `);
  const offer = r.recover;
  if (!offer) return;
  if (offer.queued === null) out.append('Count what it missed while disabled with the recover form.');
  else if (offer.queued > 0) {
    out.append(el('span', { class: 'recover-offer' }, `${n(offer.queued, 'event')} missed while disabled can be sent again. `), button(`Recover ${offer.queued}`, async () => {
      const done = await api<Envelope<{ queued: number }>>('POST', `v1/webhooks/${w.id}/recover`, { since: offer.since, until: offer.until });
      out.textContent = `${done.body!.data.queued} queued.`;
    }));
  }
}

function recoverForm(w: Webhook, out: HTMLElement): HTMLElement {
  const id = `rec-${w.id}`;
  const since = el('input', { type: 'datetime-local', id: `${id}-since`, required: '' });
  const until = el('input', { type: 'datetime-local', id: `${id}-until` });
  const form = el('form', { class: 'recover', 'aria-label': 'Recover a time range' },
    el('label', { for: `${id}-since` }, 'Recover from'), since,
    el('label', { for: `${id}-until` }, 'until (optional)'), until,
  );
  const body = () => ({ since: new Date(since.value).toISOString(), ...(until.value ? { until: new Date(until.value).toISOString() } : {}) });
  form.append(button('Count (dry run)', async () => {
    if (!since.value) throw new Error('Pick the start of the range first.');
    const r = await api<Envelope<{ queued: number }>>('POST', `v1/webhooks/${w.id}/recover`, { ...body(), dry_run: true });
    const n = r.body!.data.queued;
    out.replaceChildren(`${n} event${n === 1 ? '' : 's'} would be sent again. `);
    if (n > 0) out.append(button(`Recover ${n}`, async () => {
      const done = await api<Envelope<{ queued: number }>>('POST', `v1/webhooks/${w.id}/recover`, body());
      out.textContent = `${done.body!.data.queued} queued.`;
    }));
  }));
  form.addEventListener('submit', (e) => e.preventDefault());
  return form;
}

async function showDeliveries(w: Webhook, box: HTMLElement, stateFilter: string, cursor: string | null): Promise<void> {
  const q = new URLSearchParams({ limit: '20' });
  if (stateFilter) q.set('state', stateFilter);
  if (cursor) q.set('cursor', cursor);
  const page = (await api<Envelope<Delivery[]>>('GET', `v1/webhooks/${w.id}/deliveries?${q}`)).body!;
  const select = el('select', { id: `state-${w.id}` });
  for (const s of ['', 'pending', 'held', 'delivering', 'delivered', 'failed', 'cancelled']) {
    const o = el('option', { value: s }, s || 'all states');
    if (s === stateFilter) o.selected = true;
    select.append(o);
  }
  select.addEventListener('change', () => showDeliveries(w, box, select.value, null).catch(handle));
  const rows = el('ol', { class: 'delivery-list', 'aria-label': 'Deliveries, newest first' });
  for (const d of page.data) rows.append(deliveryItem(w, d, () => showDeliveries(w, box, stateFilter, cursor)));
  box.replaceChildren(el('div', { class: 'filter' }, el('label', { for: `state-${w.id}` }, 'Show'), select), page.data.length ? rows : el('p', {}, 'No deliveries.'));
  const older = page.meta.page?.next_cursor;
  if (older) box.append(button('Older', () => showDeliveries(w, box, stateFilter, older)));
}

function deliveryItem(w: Webhook, d: Delivery, reload: () => Promise<void>): HTMLElement {
  const attempts = el('table', { class: 'attempts' },
    el('thead', {}, el('tr', {}, ...['#', 'Started', 'Took', 'Status', 'Outcome', 'Error', 'Response'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...[...d.attempts].reverse().map((a) => el('tr', { class: 'attempt' },
      el('td', {}, String(a.attempt)), el('td', {}, time(a.started_at)), el('td', {}, `${a.duration_ms} ms`),
      el('td', { class: 'code' }, a.status_code === null ? '—' : String(a.status_code)), el('td', {}, a.outcome),
      el('td', {}, a.error_class ?? '—'), el('td', { class: 'excerpt' }, a.response_excerpt ?? ''),
    ))),
  );
  return el('li', { class: `delivery ${d.state}`, 'data-delivery-id': d.id },
    el('div', { class: 'delivery-head' },
      el('span', { class: 'mono' }, d.id), el('span', { class: 'badge' }, d.state), time(d.created_at), ` · ${d.attempt_count} attempt${d.attempt_count === 1 ? '' : 's'}`,
      d.state === 'pending' ? el('span', { class: 'next-try' }, ' · next try ', time(d.next_attempt_at)) : null,
      d.state === 'held' ? el('span', { class: 'next-try' }, ' · held until the webhook is enabled') : null,
      // The API's retry, with its limits: the send budget, the destination's circuit and the SSRF check at the attempt.
      d.state === 'failed' || d.state === 'cancelled' || d.state === 'pending' ? button(d.state === 'pending' ? 'Retry now' : 'Retry', async () => {
        await api('POST', `v1/webhooks/${w.id}/deliveries/${d.id}/retry`);
        await reload();
      }) : null,
    ),
    d.attempts.length ? attempts : null,
  );
}

function createForm(): HTMLElement {
  const f = el('form', { class: 'create', 'aria-labelledby': 'create-h' });
  const url = el('input', { id: 'c-url', type: 'url', required: '', placeholder: 'https://example.com/hooks' });
  const kind = el('select', { id: 'c-event' }, ...['trends.surge', 'trends.velocity', 'trends.rising'].map((k) => el('option', { value: k }, k)));
  const sub = el('input', { id: 'c-sub', required: '', placeholder: 'typescript' });
  const out = el('div', { class: 'output', 'aria-live': 'polite' });
  f.append(el('h2', { id: 'create-h' }, 'New webhook'),
    el('label', { for: 'c-url' }, 'URL'), url, el('label', { for: 'c-event' }, 'Event'), kind, el('label', { for: 'c-sub' }, 'Subreddit'), sub,
    el('button', { type: 'submit' }, 'Create'), out);
  f.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const r = await api<Envelope<Webhook>>('POST', 'v1/webhooks', { url: url.value, event: kind.value, subreddit: sub.value });
      const w = r.body!.data;
      document.querySelector('section[aria-label="Webhooks"]')?.prepend(webhookCard(w));
      out.replaceChildren('Created. Its signing secret (shown this once): ', el('code', { class: 'secret' }, w.secret ?? ''));
    } catch (err) {
      if (err instanceof ApiError) out.textContent = `${err.code}: ${err.message}`;
      else handle(err);
    }
  });
  return f;
}

/** One kind's example: the exact body a delivery carries and its signed headers. */
function kindExample(k: KindContract): HTMLElement {
  const headers = Object.entries(k.headers).map(([h, v]) => `${h}: ${v}`).join('\n');
  return el('div', { class: 'kind-example' },
    el('p', {}, k.summary),
    el('pre', { class: 'example-headers', 'aria-label': `${k.kind} headers` }, headers),
    el('pre', { class: 'example-body', 'aria-label': `${k.kind} body` }, k.body),
  );
}

function contract(terms: Contract): HTMLElement {
  return el('section', { class: 'contract', 'aria-labelledby': 'contract-h' },
    el('h2', { id: 'contract-h' }, 'What your receiver gets'),
    el('p', {}, 'A POST with a JSON body and the headers webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks v1). Each kind\'s example below is the exact body a delivery carries, signed with the example secret ', el('code', {}, terms.example_secret), ': your verification code should accept it.'),
    ...terms.kinds.map((k) => el('section', { class: 'kind', 'data-kind': k.kind, 'aria-label': k.kind }, el('h3', {}, k.kind), kindExample(k))),
    el('h3', {}, 'Verifying a signature'),
    el('ol', { class: 'verify' }, ...terms.verify.map((v) => el('li', {}, v))),
  );
}

/** Ends the session on the server (the cookie stops working everywhere) and shows so. */
async function signOut(): Promise<void> {
  await api('DELETE', 'portal/session');
  store.remove(SCOPE_KEY);
  scopeLine.textContent = '';
  whoseLine.textContent = '';
  signOutButton.remove();
  app.replaceChildren(el('section', { class: 'expired', role: 'status' }, el('h2', {}, 'Signed out'), el('p', {}, 'This portal session has ended. Open a new portal link to see your webhooks again.')));
}
const signOutButton = button('Sign out', signOut, { class: 'sign-out' });

interface Whose { customer_id: string; customer_name: string | null; webhook_id: string | null }

/**
 * Exchanges the link's token. A link of another customer than the session this browser already
 * holds switches only once the user agrees (the server answers 409 CONFLICT until `replace: true`):
 * a link planted somewhere cannot walk a signed-in customer into someone else's portal unasked.
 */
async function exchange(token: string): Promise<void> {
  try {
    const r = await api<Envelope<Whose>>('POST', 'portal/session', { token });
    store.set(SCOPE_KEY, r.body!.data.webhook_id ?? '');
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 'CONFLICT')) throw err;
    if (!confirm(`${err.message.replace(/\. Send replace: true to switch$/, '.')}\n\nSwitch to the portal of the link?`)) return;
    const r = await api<Envelope<Whose>>('POST', 'portal/session', { token, replace: true });
    store.set(SCOPE_KEY, r.body!.data.webhook_id ?? '');
  }
}

/** Names the customer whose portal this is, from the session itself (the header). */
async function showWhose(): Promise<void> {
  const w = (await api<Envelope<Whose>>('GET', 'portal/session')).body!.data;
  store.set(SCOPE_KEY, w.webhook_id ?? '');
  whoseLine.textContent = `Portal of ${w.customer_name ? `${w.customer_name} (${w.customer_id})` : w.customer_id}`;
  whoseLine.dataset.customerId = w.customer_id;
}

async function start(): Promise<void> {
  const m = /^#token=([A-Za-z0-9_-]+)$/.exec(location.hash);
  try {
    if (m) {
      // Out of the address bar and history before anything else: the token is single-use anyway.
      history.replaceState(null, '', location.pathname);
      await exchange(m[1]);
    }
    await showWhose();
  } catch (err) {
    return err instanceof Expired ? expired() : handle(err);
  }
  document.querySelector('header')?.append(signOutButton);
  await loadWebhooks();
}

start().catch(handle);
