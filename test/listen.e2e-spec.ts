import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as tls from 'node:tls';
import { listenCertificate, runListen } from '../src/demo/listen';
import { CLI } from './support/processes';
import { buildDeliveryHeaders } from '../src/delivery/signer';
import { generateWebhookSecret } from '../src/delivery/secret';
import { freePort } from './support/ports';

/**
 * `trendhooks listen` as a receiver: real HTTPS on 127.0.0.1 with its own certificate, signatures
 * checked with the webhook's secret, verified deliveries forwarded to a plain-HTTP app whose answer
 * becomes trendhooks' answer. (The README test covers it end to end with a running trendhooks.)
 * No database is involved, so this suite runs once.
 */
function post(port: number, ca: string, headers: Record<string, string>, body: string | Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/hooks', method: 'POST', headers, ca }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('trendhooks listen', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-listen-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('answers 401 to a bad signature, forwards verified deliveries as received, and answers with the app\'s status', async () => {
    const secret = generateWebhookSecret();
    const forwarded: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    let appStatus = 503;
    const app = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        forwarded.push({ headers: req.headers, body });
        res.writeHead(appStatus).end();
      });
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const appUrl = new URL(`http://localhost:${(app.address() as AddressInfo).port}/webhooks`);

    const port = await freePort();
    const out: string[] = [];
    const err: string[] = [];
    const done = runListen({ port, dir, secrets: [secret], forwardTo: appUrl, count: 1, json: false, out: (l) => out.push(l), err: (l) => err.push(l) });
    // The certificate is made on first use; the receiver is up once it says where it listens.
    for (let i = 0; i < 200 && !err.some((l) => l.startsWith('listening on')); i++) await new Promise((r) => setTimeout(r, 50));
    const ca = fs.readFileSync(path.join(dir, 'receiver-cert.pem'), 'utf8');
    expect(err).toContain(`  export SSRF_ALLOW_DESTINATIONS=127.0.0.1:${port}`);
    // The path the README registers, not a bare `/`.
    expect(err).toContain(`register the webhook with "url": "https://127.0.0.1:${port}/hooks", "allow_nonstandard_port": true`);

    const body = JSON.stringify({ type: 'trends.surge', timestamp: new Date().toISOString(), data: { subreddit: 'typescript', count: 42 } });
    const now = Math.floor(Date.now() / 1000);
    const good = buildDeliveryHeaders('msg_listentest0000000000000001', now, body, [secret]);
    const wrong = buildDeliveryHeaders('msg_listentest0000000000000002', now, body, [generateWebhookSecret()]);

    expect(await post(port, ca, wrong, body)).toBe(401);
    expect(forwarded).toHaveLength(0); // never forwarded unverified
    expect(err.join('\n')).toMatch(/✘ .* — webhook-id msg_listentest0000000000000002, signature NOT verified \(no v1 signature matches\)/);

    // The app fails: trendhooks is told so (it would retry), and listen keeps going.
    expect(await post(port, ca, good, body)).toBe(503);
    appStatus = 204;
    expect(await post(port, ca, good, body)).toBe(204);
    await done; // --count 1: stops after the first delivery the app accepted

    expect(forwarded).toHaveLength(2);
    expect(forwarded[1].body).toBe(body);
    expect(forwarded[1].headers).toMatchObject({ 'webhook-id': good['webhook-id'], 'webhook-timestamp': good['webhook-timestamp'], 'webhook-signature': good['webhook-signature'] });
    expect(out.join('\n')).toMatch(/✔ .* trends\.surge r\/typescript — webhook-id msg_listentest0000000000000001, signature verified/);
    expect(out.join('\n')).toContain(`→ ${appUrl.href}: 204`);
    expect(err).toContain('stopped after 1 verified delivery');
    await new Promise<void>((resolve) => app.close(() => resolve()));
  }, 60_000);
});

/** Runs `listen` in this process until it says where it listens; `stop` ends it. */
async function startListen(dir: string, secrets: string[]) {
  const port = await freePort();
  const out: string[] = [];
  const err: string[] = [];
  const done = runListen({ port, dir, secrets, count: 1, json: false, out: (l) => out.push(l), err: (l) => err.push(l) });
  for (let i = 0; i < 200 && !err.some((l) => l.startsWith('listening on')); i++) await new Promise((r) => setTimeout(r, 50));
  const ca = fs.readFileSync(path.join(dir, 'receiver-cert.pem'), 'utf8');
  return { port, out, err, done, ca };
}

describe('trendhooks listen against hostile requests', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-listen-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('answers a null (or any non-object) body 400, prints no terminal escapes, and refuses a body over 1 MiB with 413', async () => {
    const secret = generateWebhookSecret();
    const l = await startListen(dir, [secret]);
    const now = Math.floor(Date.now() / 1000);
    for (const body of ['null', '42', '[1]', '"x"']) {
      expect([body, await post(l.port, l.ca, buildDeliveryHeaders('msg_listentest0000000000000010', now, body, [secret]), body)]).toEqual([body, 400]);
    }
    // Escapes in the fields listen prints (a signed body: printed in full), and in an unsigned one's id.
    const evil = JSON.stringify({ type: 'trends.surge\u001b]0;pwned\u0007', timestamp: '\u001b[2J\u001b[31mnow', data: { subreddit: 'ts\u009b31m\u202eevil', note: '\u001b[8m\u007f' } });
    const headers = buildDeliveryHeaders('msg_listentest0000000000000011', now, evil, [generateWebhookSecret()]);
    expect(await post(l.port, l.ca, { ...headers }, evil)).toBe(401);
    // 2 MiB: refused before it is all read, the connection closed.
    const big = Buffer.alloc(2 * 1024 * 1024, 0x20);
    const status = await post(l.port, l.ca, { 'content-type': 'application/json', 'webhook-id': 'msg_big\u009b2J' }, big).catch((e: NodeJS.ErrnoException) => e.code);
    expect([413, 'ECONNRESET', 'EPIPE']).toContain(status);
    const signedEvil = buildDeliveryHeaders('msg_listentest0000000000000012', now, evil, [secret]);
    expect(await post(l.port, l.ca, signedEvil, evil)).toBe(200);
    await l.done;
    const printed = [...l.out, ...l.err].join('\n');
    // eslint-disable-next-line no-control-regex -- no control character may be printed
    expect(printed).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(printed).toContain('trends.surge\\u001b]0;pwned\\u0007');
    expect(printed).toContain('ts\\u009b31m\\u202eevil');
    expect(printed).toMatch(/not a JSON object.*answered 400/);
    expect(printed).toMatch(/over 1024 KiB \(answered 413/);
  }, 60_000);

  it('prints a test event as "<kind> (test)", so it is not taken for a trend', async () => {
    const secret = generateWebhookSecret();
    const l = await startListen(dir, [secret]);
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'trends.surge', timestamp: new Date().toISOString(), data: { event_id: 'evt_test_1', webhook_id: 'w', subreddit: 'typescript', test: true, count: 27 } });
    expect(await post(l.port, l.ca, buildDeliveryHeaders('msg_listentest0000000000000020', now, body, [secret]), body)).toBe(200);
    await l.done;
    expect(l.out.join('\n')).toMatch(/✔ .* trends\.surge \(test\) r\/typescript — webhook-id msg_listentest0000000000000020, signature verified/);
  }, 60_000);

  it('keeps a leaf certificate for 127.0.0.1 and localhost: its key cannot vouch for any other host', async () => {
    const own = fs.mkdtempSync(path.join(dir, 'cert-'));
    const cert = await listenCertificate(own);
    const x509 = new X509Certificate(cert.cert);
    expect(x509.ca).toBe(false);
    expect(x509.subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost');
    // Trusted as DELIVERY_CA_FILE is: a TLS client trusting this certificate alone accepts it…
    expect(await handshake(cert.key, cert.cert, cert.cert)).toBe('ok');
    // …and refuses a certificate for another host signed with its key.
    const other = issueWith(own, cert.caFile, path.join(own, 'receiver-key.pem'));
    expect(await handshake(other.key, other.cert, cert.cert, 'hooks.example.com')).not.toBe('ok');
  }, 60_000);

  it('replaces a receiver certificate an earlier version made as a CA, at the same path', async () => {
    const own = fs.mkdtempSync(path.join(dir, 'old-'));
    const keyFile = path.join(own, 'receiver-key.pem');
    const certFile = path.join(own, 'receiver-cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=old', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    expect(new X509Certificate(fs.readFileSync(certFile)).ca).toBe(true);
    const cert = await listenCertificate(own);
    expect(cert).toMatchObject({ replaced: true, caFile: certFile });
    expect(new X509Certificate(fs.readFileSync(certFile)).ca).toBe(false);
    expect((await listenCertificate(own)).replaced).toBeUndefined();
  }, 60_000);
});

/** A certificate for hooks.example.com and 127.0.0.1 issued with `caKey` as if `caCert` were a CA. */
function issueWith(dir: string, caCert: string, caKey: string): { key: string; cert: string } {
  const key = path.join(dir, 'other-key.pem');
  const csr = path.join(dir, 'other.csr');
  const out = path.join(dir, 'other-cert.pem');
  const ext = path.join(dir, 'other.ext');
  fs.writeFileSync(ext, 'subjectAltName=DNS:hooks.example.com,IP:127.0.0.1\n');
  execFileSync('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=hooks.example.com'], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', caCert, '-CAkey', caKey, '-CAcreateserial', '-out', out, '-days', '1', '-extfile', ext], { stdio: 'ignore' });
  return { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(out, 'utf8') };
}

/** A TLS handshake with a server presenting `cert`, trusting `ca` only: 'ok' or the client's error code. */
async function handshake(key: string, cert: string, ca: string, servername?: string): Promise<string> {
  const server = tls.createServer({ key, cert }, (s) => s.end());
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca, servername }, () => {
        s.destroy();
        resolve('ok');
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
  } finally {
    server.close();
  }
}

describe('trendhooks listen secrets', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-listen-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Spawns dist/cli.js listen; resolves once it listens, with its output so far and its command line as `ps` shows it. */
  async function spawnListen(args: string[], env: Record<string, string> = {}) {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, 'listen', '--port', String(port), '--dir', path.join(dir, 'certs'), '--count', '1', ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.stdout.on('data', (d) => (stdout += String(d)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 300 && !/listening on/.test(stderr) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 50));
    const cmdline = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    const ca = fs.readFileSync(path.join(dir, 'certs', 'receiver-cert.pem'), 'utf8');
    return { port, child, exited, cmdline, ca, stderr: () => stderr, stdout: () => stdout };
  }

  const delivery = (secret: string) => {
    const body = JSON.stringify({ type: 'trends.surge', timestamp: new Date().toISOString(), data: { subreddit: 'typescript' } });
    return { body, headers: buildDeliveryHeaders('msg_listentest0000000000000020', Math.floor(Date.now() / 1000), body, [secret]) };
  };

  it('takes the secret from --secret-file, so it is not on the command line, and verifies with it', async () => {
    const secret = generateWebhookSecret();
    const file = path.join(dir, 'secret');
    fs.writeFileSync(file, `${generateWebhookSecret()}\n${secret}\n`, { mode: 0o600 });
    const l = await spawnListen(['--secret-file', file]);
    expect(l.cmdline).toContain('--secret-file');
    expect(l.cmdline).not.toContain(secret.slice(6));
    const d = delivery(secret);
    expect(await post(l.port, l.ca, d.headers, d.body)).toBe(200);
    expect(await l.exited).toBe(0);
    expect(l.stderr()).not.toMatch(/warning/);
    expect(l.stdout()).toMatch(/signature verified/);
  }, 60_000);

  it('takes the secret from TRENDHOOKS_WEBHOOK_SECRET', async () => {
    const secret = generateWebhookSecret();
    const l = await spawnListen([], { TRENDHOOKS_WEBHOOK_SECRET: secret });
    expect(l.cmdline).not.toContain(secret.slice(6));
    const d = delivery(secret);
    expect(await post(l.port, l.ca, d.headers, d.body)).toBe(200);
    expect(await l.exited).toBe(0);
  }, 60_000);

  it('still takes --secret, with a warning on stderr that it is visible to every local user', async () => {
    const secret = generateWebhookSecret();
    const l = await spawnListen(['--secret', secret]);
    expect(l.stderr()).toMatch(/^warning: --secret puts the webhook secret on the command line, where every local user can read it \(ps\); pass it with --secret-file FILE or TRENDHOOKS_WEBHOOK_SECRET instead$/m);
    const d = delivery(secret);
    expect(await post(l.port, l.ca, d.headers, d.body)).toBe(200);
    expect(await l.exited).toBe(0);
  }, 60_000);

  it('refuses a --secret-file it cannot read, or that holds no secret, as a usage error', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, 'listen', '--dir', path.join(dir, 'certs'), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += String(d)));
        child.on('exit', (code) => resolve({ code, stderr }));
      });
    expect(await run(['--secret-file', path.join(dir, 'absent')])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--secret-file .*absent: cannot read it \(ENOENT\)/) });
    const empty = path.join(dir, 'empty');
    fs.writeFileSync(empty, '\n');
    expect(await run(['--secret-file', empty])).toMatchObject({ code: 2, stderr: expect.stringMatching(/holds no secret/) });
  }, 60_000);
});
