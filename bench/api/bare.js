'use strict';
/**
 * The framework's floor for `bench/api/throughput.js`: a bare Nest app on the same HTTP adapter as
 * the service (express or fastify, `HTTP_ADAPTER`) answering the very JSON bodies our list routes
 * gave (read from `BARE_BODIES`, a JSON file `{ "/path": body, … }`) from memory, with no auth,
 * database, logging, interceptor or pagination. Nest serialises the object on every request, as
 * it does for ours, so the bytes on the wire and the serialisation cost are the same.
 *
 * Its own process, like the API, so neither shares an event loop with autocannon.
 * Prints `bare listening on <url>` once it answers.
 */
require('reflect-metadata');
const fs = require('node:fs');
const { Controller, Get, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');

const bodies = JSON.parse(fs.readFileSync(process.env.BARE_BODIES, 'utf8'));
const adapterName = process.env.HTTP_ADAPTER ?? 'express';

// The same route table as ours (so routing costs the same), each answering its stored body.
const ROUTES = { webhooks: ['v1/webhooks', '/v1/webhooks'], subredditPosts: ['v1/subreddits/:subreddit/posts', '/v1/subreddits/benchsub/posts'], userPosts: ['v1/users/:username/posts', '/v1/users/bench_author/posts'] };

class BareController {}
for (const [name, [route, key]] of Object.entries(ROUTES)) {
  const body = bodies[key];
  BareController.prototype[name] = function () {
    return body;
  };
  Get(route)(BareController.prototype, name, Object.getOwnPropertyDescriptor(BareController.prototype, name));
}
Controller()(BareController);

class BareModule {}
Module({ controllers: [BareController] })(BareModule);

async function main() {
  let app;
  const options = { logger: ['error', 'warn'], bodyParser: false };
  if (adapterName === 'fastify') {
    const { FastifyAdapter } = require('@nestjs/platform-fastify');
    app = await NestFactory.create(BareModule, new FastifyAdapter(), options);
  } else {
    app = await NestFactory.create(BareModule, options);
    app.disable('x-powered-by');
  }
  await app.listen(Number(process.env.PORT), '127.0.0.1');
  console.log(`bare listening on http://127.0.0.1:${process.env.PORT}`);
  const stop = () => app.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
