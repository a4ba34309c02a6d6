'use strict';
/**
 * The benchmark's webhook receiver: node:https on 127.0.0.1, answers 200 "ok" at once. Runs as a
 * child process (forked by throughput.js) so it never competes with the worker's event loop.
 *
 *   argv: <key.pem> <cert.pem>
 *   → parent: {type:'ready', port}, {type:'count', seq, count, connections, cpu_us, last_at}, {type:'arrival', id, at} (report mode)
 *   ← parent: {cmd:'count', seq}, {cmd:'report', on}, {cmd:'reset'}
 *
 * `at` is wall-clock milliseconds with sub-millisecond resolution (timeOrigin + now), the same
 * clock the parent reads before EventsService.emit.
 */
const fs = require('node:fs');
const https = require('node:https');

const [keyFile, certFile] = process.argv.slice(2);
let count = 0;
let lastAt = null; // when the latest request (since the last reset) was complete
const cpuUs = () => { const u = process.cpuUsage(); return u.user + u.system; };
let connections = 0;
let report = false;

const server = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile), keepAlive: true }, (req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    count++;
    lastAt = performance.timeOrigin + performance.now();
    if (report) process.send({ type: 'arrival', id: req.headers['webhook-id'], at: performance.timeOrigin + performance.now() });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
server.on('secureConnection', () => connections++);
// Longer than the clients' 4 s idle keep-alive, so the client always closes first (no reset races).
server.keepAliveTimeout = 10_000;

process.on('message', (m) => {
  if (m.cmd === 'count') process.send({ type: 'count', seq: m.seq, count, connections, cpu_us: cpuUs(), last_at: lastAt });
  else if (m.cmd === 'report') report = Boolean(m.on);
  else if (m.cmd === 'reset') {
    count = connections = 0;
    lastAt = null;
  }
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
