import { DELIVERY_ID_LENGTH } from '../../../delivery-id';

const CROCKFORD_LOWER = '0123456789abcdefghjkmnpqrstvwxyz';
// chr(64) … chr(95): the digits before translate().
const RAW = Array.from({ length: 32 }, (_, i) => String.fromCharCode(64 + i)).join('');

/**
 * `deliveryId(eventId, webhookId)` (src/delivery/delivery-id.ts) as an SQL expression over two
 * text expressions, so a fan-out can derive its delivery ids inside the statement that finds the
 * subscribers: the same SHA-256 over the same length-prefixed UTF-8 bytes, and the same first 26
 * base32 digits, most significant bit first. The digest's hex is read as three overlapping 64-bit
 * words starting at bits 0, 60 and 120 (hex digits 1, 16 and 31): each holds the next 12 digits
 * (60 bits) whole, and a digit is `(word >> shift) & 31`, mapped to the alphabet. Plain
 * arithmetic per row. The `OFFSET 0`s keep the planner from inlining the digest and the words into
 * each of the 26 digits (it would hash 26 times per row).
 * test/stores/delivery-queue.e2e-spec.ts checks it against the TypeScript function.
 */
export function deliveryIdSql(eventId: string, webhookId: string): string {
  const part = (text: string) => `convert_to(octet_length(convert_to(${text}, 'UTF8'))::text || ':' || ${text}, 'UTF8')`;
  const hex = `encode(sha256(convert_to('trendhooks/delivery-id/v1', 'UTF8') || '\\x00'::bytea || ${part(eventId)} || '\\x00'::bytea || ${part(webhookId)}), 'hex')`;
  const word = (n: number) => `('x' || substr(h.hex, ${n * 15 + 1}, 16))::bit(64)::bigint`;
  // Each digit as chr(64 + value) ('@' … '_', one contiguous range), then one translate() to the alphabet.
  const digits: string[] = [];
  for (let g = 0; g < DELIVERY_ID_LENGTH; g++) digits.push(`chr((((w${Math.floor(g / 12)} >> ${59 - 5 * (g % 12)}) & 31) + 64)::int)`);
  return `(SELECT 'msg_' || translate(${digits.join(' || ')}, '${RAW}', '${CROCKFORD_LOWER}') FROM (SELECT ${word(0)} AS w0, ${word(1)} AS w1, ${word(2)} AS w2 FROM (SELECT ${hex} AS hex OFFSET 0) h OFFSET 0) ws)`;
}
