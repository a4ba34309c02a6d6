'use strict';
/**
 * The two undici clients side by side, no queue: `request()` (what bench:delivery's raw baseline
 * uses, as the table did) and `dispatch()` with a bare handler (what the delivery sender
 * uses since it stopped paying for a body stream and an async iterator per send). Same receiver
 * child as bench:delivery, same delivery-like body and headers, same concurrency (64), keep-alive.
 *
 *   node bench/delivery/raw-clients.js [--rounds=4] [--requests=20000]
 *
 * Prints, per client, POSTs per second and this process's CPU µs per POST, medians (min–max) of
 * the alternating rounds (each after a warm-up of 2,000 on a fresh pool). Writes no file.
 */
const { execFileSync, fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Agent, request } = require('undici');
const { arg, median } = require('../lib');

const ROUNDS = arg('rounds', 4);
const REQUESTS = arg('requests', 20_000);
const CONCURRENCY = 64;

const body = JSON.stringify({
  type: 'trends.surge',
  timestamp: new Date().toISOString(),
  data: { event_id: '01JD0000000000000000000000', webhook_id: '01JD0000000000000000000001', subreddit: 'benchsub', count: 420, baseline: 17.25, ratio: 24.35, window_s: 3600, top_post: 't3_1abcde' },
});
const headers = {
  'content-type': 'application/json',
  'user-agent': 'trendhooks-webhooks/1',
  'webhook-id': 'msg_0000000000000000000000000',
  'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
  'webhook-signature': `v1,${'A'.repeat(43)}=`,
};

async function viaRequest(agent, url, n) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < n) {
        const res = await request(url, { method: 'POST', headers, body, dispatcher: agent });
        for await (const _ of res.body); // read to the end
        if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
      }
    }),
  );
}

function dispatchOne(agent, origin, pathname) {
  return new Promise((resolve, reject) => {
    let status = 0;
    agent.dispatch(
      { origin, path: pathname, method: 'POST', headers, body },
      {
        onRequestStart() {},
        onResponseStart(_c, s) {
          status = s;
        },
        onResponseData() {},
        onResponseEnd() {
          if (status === 200) resolve();
          else reject(new Error(`status ${status}`));
        },
        onResponseError(_c, err) {
          reject(err);
        },
      },
    );
  });
}

async function viaDispatch(agent, url, n) {
  const { origin, pathname } = new URL(url);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < n) await dispatchOne(agent, origin, pathname);
    }),
  );
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-raw-clients-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const ca = fs.readFileSync(cert);
  const rx = fork(path.join(__dirname, 'receiver.js'), [key, cert], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  try {
    const port = await new Promise((resolve) => rx.on('message', (m) => m.type === 'ready' && resolve(m.port)));
    const url = `https://127.0.0.1:${port}/hook`;
    const clients = { request: viaRequest, dispatch: viaDispatch };
    const out = { request: { per_s: [], cpu_us: [] }, dispatch: { per_s: [], cpu_us: [] } };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, run] of Object.entries(clients)) {
        const agent = new Agent({ connect: { ca }, keepAliveTimeout: 4000, connections: CONCURRENCY });
        await run(agent, url, 2000);
        const c = process.cpuUsage();
        const t = performance.now();
        await run(agent, url, REQUESTS);
        const ms = performance.now() - t;
        const d = process.cpuUsage(c);
        out[name].per_s.push((REQUESTS / ms) * 1000);
        out[name].cpu_us.push((d.user + d.system) / REQUESTS);
        await agent.close();
      }
    }
    const fmt = (xs, d = 0) => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;
    console.log(`undici clients, ${ROUNDS} alternating rounds of ${REQUESTS} POSTs at concurrency ${CONCURRENCY}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    for (const [name, o] of Object.entries(out)) console.log(`${name.padEnd(9)} ${fmt(o.per_s)} POSTs/s, ${fmt(o.cpu_us, 1)} µs CPU per POST`);
    console.log(`dispatch / request: ${(median(out.dispatch.per_s) / median(out.request.per_s)).toFixed(2)}× the rate`);
  } finally {
    rx.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
