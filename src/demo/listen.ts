import * as fs from 'node:fs';
import * as path from 'node:path';
import { plural } from '../common/plural';
import { DemoCert, DemoReceiver, isCaCertificate, makeSelfSignedCert, ReceivedRequest, RECEIVER_MAX_BODY_BYTES } from './receiver';
import { verifyWebhookSignature } from './verify';
import { typeLabel } from './format';

/**
 * `trendhooks listen`: a local HTTPS receiver for developing against trendhooks, in the spirit of
 * `stripe listen`. It keeps a self-signed certificate of its own in `dir`, verifies each delivery's
 * Standard Webhooks signature with the webhook's secret, prints it, and may hand verified
 * deliveries to the developer's plain-HTTP app (`forwardTo`). trendhooks reaches it through an
 * exact allowance (SSRF_ALLOW_DESTINATIONS=127.0.0.1:PORT plus DELIVERY_CA_FILE=its certificate),
 * never through a whole address range.
 */
export interface ListenOptions {
  port: number;
  /** Where the certificate lives (made on first use, kept for a year). */
  dir: string;
  /** Webhook secrets (`whsec_…`); a delivery verifies when any one matches. */
  secrets: string[];
  /** http://localhost:PORT/path (loopback only): verified deliveries are POSTed there as received. */
  forwardTo?: URL;
  /** Stop after this many verified deliveries (scripts, the README test); 0 = until interrupted. */
  count: number;
  json: boolean;
  out: (line: string) => void;
  err: (line: string) => void;
}

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** Parses --forward-to: plain http(s) to this machine only; anything else is a usage mistake. */
export function parseForwardTo(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`--forward-to must be a URL such as http://localhost:3000/webhooks, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--forward-to must be an http:// URL, got "${raw}"`);
  if (!LOOPBACK_HOSTS.test(url.host.replace(/:\d+$/, ''))) {
    throw new Error(`--forward-to must point at this machine (localhost, 127.0.0.1 or [::1]), got "${url.hostname}"`);
  }
  return url;
}

/**
 * The certificate of `dir`, made once and then reused, so serve's DELIVERY_CA_FILE stays valid.
 * One made by an earlier version as a CA (trusted by DELIVERY_CA_FILE for every host) is made
 * again, at the same path, as a leaf for 127.0.0.1 and localhost (`replaced`: serve must be
 * restarted to read it).
 */
export async function listenCertificate(dir: string): Promise<DemoCert & { replaced?: boolean }> {
  const keyFile = path.join(dir, 'receiver-key.pem');
  const certFile = path.join(dir, 'receiver-cert.pem');
  let replaced = false;
  if (fs.existsSync(keyFile) && fs.existsSync(certFile)) {
    const cert = fs.readFileSync(certFile, 'utf8');
    if (!isCaCertificate(cert)) return { key: fs.readFileSync(keyFile, 'utf8'), cert, caFile: certFile };
    replaced = true;
  }
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new Error(`cannot create ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const made = await makeSelfSignedCert(dir, { days: 365, name: 'trendhooks-listen' });
  return replaced ? { ...made, replaced } : made;
}

/** The note for a certificate listenCertificate made again. */
export const REPLACED_CA_NOTE = 'the receiver certificate was a CA (trusted for every host by DELIVERY_CA_FILE); it is now a certificate for 127.0.0.1 and localhost only, at the same path: restart trendhooks serve so it reads it';

// C0 and C1 controls (ESC, CSI, BEL, backspace, CR…), DEL, and the bidirectional overrides that reorder what a terminal shows.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A value from a request, safe to print on a terminal: control characters as `\uXXXX`, never sent through. */
export function printable(value: unknown): string {
  return String(value).replace(UNPRINTABLE, escapeChar);
}

/** JSON text safe to print: JSON.stringify escapes C0 controls but passes DEL, C1 and bidi controls through; those become `\uXXXX` too (still valid JSON). */
export function printableJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, escapeChar);
}

/** What `trendhooks serve` needs to deliver to this receiver, as `export` lines (eval- and source-able). */
export function serveSettings(port: number, caFile: string): string[] {
  const quote = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);
  return [`export SSRF_ALLOW_DESTINATIONS=127.0.0.1:${port}`, `export DELIVERY_CA_FILE=${quote(path.resolve(caFile))}`];
}

/** Runs until interrupted (SIGINT/SIGTERM) or `count` verified deliveries; resolves with the count. */
export async function runListen(opts: ListenOptions): Promise<number> {
  const cert = await listenCertificate(opts.dir);
  if (cert.replaced) opts.err(REPLACED_CA_NOTE);
  let verified = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));

  const handle = async (req: ReceivedRequest): Promise<number> => {
    const headers = req.headers as Record<string, string | string[] | undefined>;
    const msgId = printable(headers['webhook-id'] ?? '?');
    let parsed: unknown;
    try {
      parsed = JSON.parse(req.body);
    } catch {
      // not JSON: answered 400 below; never a trendhooks delivery
    }
    // Every trendhooks delivery is a JSON object; `null`, a number or an array is not one.
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      const line = `✘ webhook-id ${msgId}: the body is not a JSON object, so not a trendhooks delivery (answered 400)`;
      if (opts.json) opts.out(JSON.stringify({ webhook_id: msgId, verified: false, reason: 'body is not a JSON object' }));
      else opts.err(line);
      return 400;
    }
    const body = parsed as { type?: unknown; timestamp?: unknown; data?: Record<string, unknown> };
    const results = opts.secrets.map((s) => verifyWebhookSignature(s, headers, req.body));
    const ok = results.some((r) => r.ok);
    const reason = ok ? undefined : opts.secrets.length === 0 ? 'no secret given' : (results.find((r) => !r.ok) as { reason: string }).reason;
    const type = typeof body.type === 'string' ? printable(body.type) : '?';
    const data = body.data && typeof body.data === 'object' ? body.data : {};
    let forwarded: number | string | undefined;
    if (ok && opts.forwardTo) forwarded = await forward(opts.forwardTo, req);
    if (opts.json) {
      opts.out(printableJson({ webhook_id: msgId, verified: ok, ...(reason ? { reason } : {}), ...(forwarded !== undefined ? { forwarded } : {}), body }));
    } else {
      const check = ok ? 'signature verified' : `signature NOT verified (${reason})`;
      const line = `${ok ? '✔' : '✘'} ${printable(body.timestamp ?? '?')} ${typeLabel(type, data)} r/${printable(data.subreddit ?? '?')} — webhook-id ${msgId}, ${check}`;
      (ok ? opts.out : opts.err)(line);
      if (ok) opts.out(printableJson(body, 2));
      if (forwarded !== undefined) opts.out(`  → ${opts.forwardTo!.href}: ${typeof forwarded === 'number' ? forwarded : `failed (${printable(forwarded)})`}`);
    }
    if (!ok) return 401; // permanent for trendhooks: a wrong secret does not fix itself by retrying
    // The developer's app decides: its failure makes trendhooks retry, as it would in production.
    const status = forwarded === undefined ? 200 : typeof forwarded === 'number' ? forwarded : 502;
    if (status < 300) {
      verified++;
      if (opts.count > 0 && verified >= opts.count) setImmediate(done);
    }
    return status;
  };

  let receiver: DemoReceiver;
  try {
    receiver = await DemoReceiver.start(cert, handle, opts.port, {
      onTooLarge: (req) => opts.err(`✘ webhook-id ${printable(req.headers['webhook-id'] ?? '?')}: body over ${RECEIVER_MAX_BODY_BYTES / 1024} KiB (answered 413, not read)`),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`port ${opts.port} on 127.0.0.1 is in use; pick another with --port`, { cause: err });
    throw err;
  }
  const url = receiver.url('/');
  // The path the README and the host example register (any path is received; one name everywhere).
  const hooksUrl = receiver.url('/hooks');
  opts.err(`listening on ${url} (certificate ${path.relative(process.cwd(), cert.caFile) || cert.caFile})`);
  opts.err(`trendhooks serve delivers here, and only here, with these settings:`);
  for (const line of serveSettings(opts.port || Number(new URL(url).port), cert.caFile)) opts.err(`  ${line}`);
  opts.err(`register the webhook with "url": "${hooksUrl}", "allow_nonstandard_port": true`);
  if (opts.secrets.length === 0) opts.err('no secret given (--secret-file, or TRENDHOOKS_WEBHOOK_SECRET): deliveries are printed but cannot be verified (answered 401)');
  if (opts.forwardTo) opts.err(`verified deliveries are forwarded to ${opts.forwardTo.href}`);

  const stop = () => done();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await finished;
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await receiver.close();
  }
  opts.err(`stopped after ${plural(verified, 'verified delivery', 'verified deliveries')}`);
  return verified;
}

/** POSTs the delivery as received (body and signature headers) to the developer's app. */
async function forward(target: URL, req: ReceivedRequest): Promise<number | string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent']) {
    const v = req.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  try {
    const res = await fetch(target, { method: 'POST', headers, body: req.body, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return cause ?? (err as Error).name;
  }
}
