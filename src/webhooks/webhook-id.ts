import { AppError } from '../common/errors';
import { normaliseUlid } from '../common/ids';

/** A webhook id from a path: a 26-character ULID, case-insensitive, or a VALIDATION_ERROR. */
export function parseWebhookId(raw: string): string {
  const id = normaliseUlid(raw);
  if (!id) throw new AppError('VALIDATION_ERROR', 'webhook_id must be a 26-character ULID');
  return id;
}
