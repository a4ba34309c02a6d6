import type { Server } from 'node:http';

/** How long a client may take, and how many connections it may hold, on the API listener. */
export interface HttpLimits {
  /** From the connection (or the end of the previous request) to the last header line. */
  headersTimeoutMs: number;
  /** From the connection to the last byte of the request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveTimeoutMs: number;
  /** Connections open at once; further ones are closed as they arrive. */
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5000, maxConnections: 1024 };

/**
 * Puts `limits` on the HTTP server under Nest, express's or fastify's alike (both are a
 * node:http Server). Node checks the header and request deadlines on a timer
 * (`connectionsCheckingInterval`, 30 s by default, read when the server starts listening):
 * made a quarter of the shorter deadline, so a slow client is cut off within a quarter past its
 * deadline, with `408 REQUEST_TIMEOUT` in the envelope (the `clientError` handler), not up to
 * 30 s after it. Not capped at 1 s: checking every second, the database-restart suite on SQLite
 * saw keep-alive requests reset while the locked database stalled the event loop (2 of 3 runs;
 * none in 6 with a quarter of the default 10 s).
 * Fastify sets no request timeout of its own (0: never), express Node's 300 s.
 * Call before `listen()`.
 */
export function applyHttpLimits(server: Server, limits: HttpLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  const shorter = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(50, Math.floor(shorter / 4));
}
