import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';

const CLI = path.resolve(__dirname, '../dist/cli.js');
const DELIVERY_TIMEOUT_MS = 5000;

/** PORT=0 would not tell us the port: take a free one from the OS first. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

interface Answer {
  status: number;
  body: any;
}

/** A request whose body is sent in two parts, so it can be in flight at a chosen moment. */
function splitRequest(port: number, p: string, headers: Record<string, string>, body: string) {
  const req = http.request({ host: '127.0.0.1', port, path: p, method: 'POST', headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  void answer.catch(() => undefined); // awaited by the test; no unhandled rejection if it fails earlier
  const half = Math.floor(body.length / 2);
  req.write(body.slice(0, half));
  return { answer, finish: () => req.end(body.slice(half)) };
}

describe.each(['express', 'fastify'])('graceful shutdown of `trendhooks serve` (role all, SQLite, %s)', (adapter) => {
  let cert: TestCert;
  let rx: Receiver;
  let dir: string;
  let child: ChildProcess | undefined;
  const output: string[] = [];

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-shutdown-'));
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rx?.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  it('on SIGTERM stops accepting, answers the request in flight, finishes and records the delivery attempt, and exits 0', async () => {
    const port = await freePort();
    const dbFile = path.join(dir, 'trendhooks.db');
    const env = {
      PATH: process.env.PATH,
      DATABASE_URL: `sqlite:${dbFile}`,
      HOST: '127.0.0.1',
      HTTP_ADAPTER: adapter,
      PORT: String(port),
      CURSOR_SECRET: 'shutdown-cursor-secret-0123456789abcdefghij',
      SSRF_ALLOW_CIDRS: '127.0.0.1/32',
      DELIVERY_CA_FILE: cert.caFile,
      DELIVERY_POLL_INTERVAL_MS: '50',
      DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS),
      DELIVERY_LEASE_MS: '15000',
      TRACKED_SUBREDDITS: '',
      // Never reach the real Reddit from a test.
      REDDIT_BASE_URL: 'http://127.0.0.1:9',
    };
    const issued = JSON.parse(execFileSync(process.execPath, [CLI, 'keys', 'create', '--customer', 'shutdown', '--plan', 'business', '--json'], { env }).toString());
    const auth = { Authorization: `Bearer ${issued.key}` };

    child = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => output.push(String(d)));
    child.stderr!.on('data', (d) => output.push(String(d)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
      child!.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if ((await fetch(`${base}/healthz`).catch(() => null))?.status === 200) break;
      if (i > 200) throw new Error(`serve did not come up:\n${output.join('')}`);
      await sleep(100);
    }

    const created = await fetch(`${base}/v1/webhooks`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: rx.url('/slow'), event: 'trends.surge', subreddit: 'shutdown', allow_nonstandard_port: true }),
    });
    expect(created.status).toBe(201);
    const webhook = ((await created.json()) as { data: { id: string } }).data;

    // A delivery whose receiver takes a second to answer.
    rx.behaviour = () => ({ status: 200, delayMs: 1000 });
    const test = await fetch(`${base}/v1/webhooks/${webhook.id}/test`, { method: 'POST', headers: auth });
    expect(test.status).toBe(202);
    const { delivery_id } = ((await test.json()) as { data: { delivery_id: string } }).data;
    await rx.waitForCount(1, 10_000);

    // An HTTP request in flight: headers and half its body sent.
    const inFlight = splitRequest(port, '/v1/webhooks', auth, JSON.stringify({ url: rx.url('/second'), event: 'trends.rising', subreddit: 'shutdown', allow_nonstandard_port: true }));
    await sleep(200);

    const termAt = Date.now();
    child.kill('SIGTERM');
    await sleep(300);
    expect(await connects(port)).toBe(false); // no new connections
    inFlight.finish();
    const answer = await inFlight.answer;
    expect(answer.status).toBe(201);
    expect(answer.body.data).toMatchObject({ event: 'trends.rising', subreddit: 'shutdown' });

    const exit = await exited;
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
    // It waited for the attempt (the receiver answers ~0.8 s after the signal), within the attempt's
    // bound (timeout + 1 s) plus closing, not the whole SHUTDOWN_TIMEOUT_MS.
    expect(exit.at - termAt).toBeGreaterThanOrEqual(500);
    expect(exit.at - termAt).toBeLessThan(DELIVERY_TIMEOUT_MS + 3000);

    // The attempt in flight at SIGTERM finished and was recorded; nothing was sent twice.
    expect(rx.received).toHaveLength(1);
    const db = new Database(dbFile, { readonly: true });
    try {
      const d = db.prepare('SELECT state, attempts, lease_owner FROM deliveries WHERE id = ?').get(delivery_id);
      expect(d).toEqual({ state: 'delivered', attempts: 1, lease_owner: null });
      const attempts = db.prepare('SELECT status_code, outcome FROM delivery_attempts WHERE delivery_id = ?').all(delivery_id);
      expect(attempts).toEqual([{ status_code: 200, outcome: 'delivered' }]);
      expect(db.prepare('SELECT COUNT(*) AS n FROM webhooks').get()).toEqual({ n: 2 });
    } finally {
      db.close();
    }
    expect(output.join('')).toContain('SIGTERM: finishing requests and deliveries in flight');
  }, 60_000);
});
