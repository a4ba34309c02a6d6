import { errorChain } from '../common/error-chain';
import type { RetryPolicy } from './retry-policy';

export type AttemptOutcome =
  | { kind: 'delivered' }
  | { kind: 'transient'; errorClass: string }
  | { kind: 'permanent'; errorClass: string };

export type NextStep = { state: 'delivered' } | { state: 'retrying'; delayMs: number } | { state: 'failed' };

/** 4xx that mean "not now" rather than "never": Request Timeout, Too Early, Too Many Requests. */
const TRANSIENT_4XX = new Set([408, 425, 429]);

/** Only these statuses make a Retry-After meaningful for scheduling (RFC 9110 §10.2.3, §15.6.4). */
const RETRY_AFTER_CLASSES = new Set(['http_429', 'http_503']);

/** The outcome of an attempt that got a response with this status. */
export function classifyResponse(status: number): AttemptOutcome {
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    // Garbage from the receiver or a proxy: not a clear refusal, so let the schedule retry.
    return { kind: 'transient', errorClass: 'invalid_status' };
  }
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  // Redirects are never followed (the target would bypass the SSRF check), and retrying
  // would get the same redirect: the receiver must fix the URL.
  if (status >= 300 && status < 400) return { kind: 'permanent', errorClass: `redirect_${status}` };
  if (status >= 500 || TRANSIENT_4XX.has(status)) return { kind: 'transient', errorClass: `http_${status}` };
  if (status >= 400) return { kind: 'permanent', errorClass: `http_${status}` };
  // 1xx as a final status is a protocol glitch along the way, not the receiver's answer.
  return { kind: 'transient', errorClass: `http_${status}` };
}

const CODE_CLASS: Record<string, string> = {
  ECONNREFUSED: 'connection_refused',
  ECONNRESET: 'connection_reset',
  EPIPE: 'connection_reset',
  ECONNABORTED: 'connection_reset',
  UND_ERR_SOCKET: 'connection_reset',
  ENOTFOUND: 'dns_failure',
  EAI_AGAIN: 'dns_failure',
  EPROTO: 'tls_failure',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'tls_failure',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls_failure',
  SELF_SIGNED_CERT_IN_CHAIN: 'tls_failure',
  UNABLE_TO_GET_ISSUER_CERT: 'tls_failure',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'tls_failure',
  HOSTNAME_MISMATCH: 'tls_failure',
  INVALID_CA: 'tls_failure',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  // Our only reason to abort a request is its deadline.
  UND_ERR_ABORTED: 'timeout',
  UND_ERR_ABORT: 'timeout',
  ABORT_ERR: 'timeout',
  ETIMEDOUT: 'timeout',
};

/** AbortSignal.timeout() rejects with a DOMException named TimeoutError; abort() with AbortError. */
const NAME_CLASS: Record<string, string> = {
  AbortError: 'timeout',
  TimeoutError: 'timeout',
};

function classOfCode(code: string): string | undefined {
  const known = CODE_CLASS[code];
  if (known !== undefined) return known;
  // OpenSSL verify errors (CERT_HAS_EXPIRED, ERROR_IN_CERT_NOT_BEFORE_FIELD…) and Node's TLS codes.
  if (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || /(^|_)CERT(_|$)/.test(code)) {
    return 'tls_failure';
  }
  return undefined;
}

/**
 * When wrappers disagree (fetch's TypeError → SocketError → ECONNRESET caused by a TLS alert…),
 * the most specific diagnosis wins, whatever the nesting order.
 */
const PRIORITY = ['destination_blocked', 'tls_failure', 'dns_failure', 'connection_refused', 'timeout', 'connection_reset'];

/** The outcome of an attempt that failed before a response arrived (or was refused up front). */
export function classifyError(err: unknown): AttemptOutcome {
  const found = new Set<string>();
  for (const e of errorChain(err)) {
    const code = e.code;
    // A host that no longer resolves is a DNS failure (transient); one resolving to a blocked address is not.
    if (code === 'WEBHOOK_DESTINATION_BLOCKED') found.add(e.unresolved === true ? 'dns_failure' : 'destination_blocked');
    else if (typeof code === 'string') {
      const cls = classOfCode(code);
      if (cls !== undefined) found.add(cls);
    }
    const name = e.name;
    if (typeof name === 'string' && NAME_CLASS[name] !== undefined) found.add(NAME_CLASS[name]);
  }
  // The SSRF policy now refuses this URL (e.g. DNS moved to a private IP): retrying cannot help.
  if (found.has('destination_blocked')) return { kind: 'permanent', errorClass: 'destination_blocked' };
  for (const cls of PRIORITY) {
    if (found.has(cls)) return { kind: 'transient', errorClass: cls };
  }
  // Unknown failures are assumed to be the network's fault; the schedule bounds the cost.
  return { kind: 'transient', errorClass: 'network_error' };
}

/**
 * What an error before a response says, for the attempt's excerpt: `Name CODE: message`, with
 * the first code found beneath any wrappers (undici's and fetch's hide the socket's).
 */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let code: unknown;
  for (const e of errorChain(err)) {
    code = e.code;
    if (code != null) break;
  }
  return `${err.name}${code ? ` ${String(code)}` : ''}: ${err.message}`;
}

/** Whether a Retry-After header may influence the next delay after this outcome. */
export function retryAfterApplies(outcome: AttemptOutcome): boolean {
  return outcome.kind === 'transient' && RETRY_AFTER_CLASSES.has(outcome.errorClass);
}

/**
 * What to do after an attempt: `attemptsMade` counts attempts so far including this one.
 * Transient failures retry while the policy has attempts left; `retryAfterMs` is ignored unless
 * the response was a 429 or 503.
 */
export function decideNext(
  outcome: AttemptOutcome,
  attemptsMade: number,
  policy: RetryPolicy,
  retryAfterMs: number | null,
): NextStep {
  if (outcome.kind === 'delivered') return { state: 'delivered' };
  if (outcome.kind === 'permanent') return { state: 'failed' };
  const delayMs = policy.nextDelayMs(attemptsMade, retryAfterApplies(outcome) ? retryAfterMs : null);
  return delayMs === null ? { state: 'failed' } : { state: 'retrying', delayMs };
}
