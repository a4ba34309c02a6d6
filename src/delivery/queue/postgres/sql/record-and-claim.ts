import { ASYNC_COMMIT_CTE } from './async-commit';
import { CLAIMED_COLUMNS, claimCtes } from './claim';
import { RECORD_CTES } from './record';
import type { PreparedStatement } from './statement';

/**
 * The outcomes ($1…$16, see RECORD_CTES) and the claim of their replacements ($17 owner, $18
 * lease until, $19 now, $20 limit) in one round trip: rows with `held` set are outcomes whose
 * lease still held; the others are newly leased deliveries.
 */
export const RECORD_AND_CLAIM: PreparedStatement = {
  name: 'trendhooks_record_and_claim',
  text: `WITH ${ASYNC_COMMIT_CTE}, ${RECORD_CTES},
    ${claimCtes({ owner: '$17', leaseUntil: '$18', now: '$19', limit: '$20', exclude: '$2::varchar[]' })}
  SELECT true AS held, h.id, NULL AS event_id, NULL AS webhook_id, NULL AS attempts, NULL AS lost_since, NULL AS url, NULL AS customer_id, NULL AS allow_nonstandard_port, NULL AS secret,
         NULL AS previous_secret, NULL AS previous_secret_expires_at, NULL AS disabled_at, NULL AS event_type, NULL AS event_subreddit, NULL AS event_payload, NULL AS event_created_at
  FROM held h
  UNION ALL
  SELECT false, ${CLAIMED_COLUMNS}`,
};
