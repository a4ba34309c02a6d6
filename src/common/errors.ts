/**
 * The closed list of error codes trendhooks answers with, and the HTTP status each maps to.
 * Services throw `AppError` with one of these codes; the exception filter is the only place
 * that turns a code into a status (DECISIONS "Statuses and error codes").
 */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  PLAN_REQUIRED: 403,
  /** The caller's session does not reach this route: a portal session outside its scope, or a cross-site request. */
  FORBIDDEN: 403,
  WEBHOOK_QUOTA_EXCEEDED: 403,
  INVALID_JSON: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 400,
  WEBHOOK_DESTINATION_BLOCKED: 422,
  BAD_REQUEST: 400,
  INVALID_CURSOR: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  /** The webhook is disabled: resume it (PATCH {"disabled": false}) first. */
  WEBHOOK_DISABLED: 409,
  RATE_LIMITED: 429,
  PAYLOAD_TOO_LARGE: 413,
  HEADERS_TOO_LARGE: 431,
  REQUEST_TIMEOUT: 408,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A domain error: safe to show to the client as is (code + message, never internals). */
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}
