import { monotonicFactory } from 'ulid';

// Monotonic so ids minted in the same millisecond still sort in creation order (keyset pages rely on it).
const ulid = monotonicFactory();

export function newUlid(now = Date.now()): string {
  return ulid(now);
}

/** Typed, prefixed ids (`cus_…`, `key_…`, `evt_…`). */
export function newId(prefix: string, now = Date.now()): string {
  return `${prefix}_${ulid(now)}`;
}

const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Crockford base32 is case-insensitive; the canonical form is upper case. Returns null when not a ULID. */
export function normaliseUlid(value: string): string | null {
  const upper = value.toUpperCase();
  return ULID_RE.test(upper) ? upper : null;
}
