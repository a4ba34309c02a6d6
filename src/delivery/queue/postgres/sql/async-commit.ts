/**
 * The worker's hot-path statements (claims, attempt outcomes) commit without waiting for their
 * WAL flush (`synchronous_commit = off` for that transaction only; this CTE joined into the
 * statement sets it). Waiting for the flush was most of each round trip. It is safe because what
 * such a commit can lose in a database crash (the last ~0.5 s) only ever makes a delivery due
 * again, to be sent once more with the same webhook-id: the at-least-once contract. Writing an
 * event and its deliveries (the outbox) still waits for the flush.
 */
export const ASYNC_COMMIT_CTE = `async_commit AS (SELECT set_config('synchronous_commit', 'off', true))`;
