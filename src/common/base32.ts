/** Crockford base32, lower-case (no i, l, o, u): readable in logs and distinct from upper-case ULIDs. */
const CROCKFORD_LOWER = '0123456789abcdefghjkmnpqrstvwxyz';

/** The first `chars` 5-bit groups of `bytes`, most significant bit first, as lower-case Crockford base32. */
export function crockfordBase32(bytes: Uint8Array, chars: number): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      bits -= 5;
      out += CROCKFORD_LOWER[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1; // keep only the unread bits so acc never overflows
    if (out.length >= chars) break;
  }
  return out;
}
