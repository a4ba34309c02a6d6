/**
 * Keyword extraction for `trends.velocity`: deterministic and cheap, since every post passes here.
 *
 * Lower-case; URLs removed; apostrophes deleted ("don't" → "dont"); tokens are maximal runs of
 * Unicode letters, marks and digits; tokens shorter than 3 or longer than 40 characters and English
 * stopwords are dropped; then one light suffix rule (plural s/es/ies, -ing, -ed).
 *
 * Tickers: a cashtag (`$` then 1–6 ASCII letters: `$SOS`, `$F`) is always a keyword, the same one as
 * the bare word (`$SOS` and `SOS` both count as `sos`), stopwords included (`$ON`); a two-letter
 * word written in capitals (`BB`) is a keyword unless it is a two-letter stopword (`IT`, `TO`).
 * Other two-letter words stay noise.
 */
import { ENGLISH_STOPWORDS } from './stopwords';

export const MIN_TOKEN_LENGTH = 3;
/** Longer runs are hashes, base64 or unspaced scripts, never useful keywords. */
export const MAX_TOKEN_LENGTH = 40;

/** FNV-1a 32-bit: tokens are hashed while scanned, so lookups never hash a string twice. */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Non-ASCII characters that continue a token; ASCII is decided by char code on the hot path. */
const WORD_CHAR_RE = /^[\p{L}\p{M}\p{N}]$/u;
const DOLLAR = 36;
/** Longest cashtag: tickers are 1–5 letters, a few (share classes) 6. */
export const MAX_CASHTAG_LENGTH = 6;
const VOWEL_RE = /[aeiouy]/;

/** Receives each keyword; an object rather than a closure so hot callers allocate nothing per post. */
export interface TokenSink {
  push(token: string): void;
}

/** All keywords of `text` in order, repeats kept. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  scanTokens(text, out);
  return out;
}

/** Distinct keywords of a post's title and self-text: a post counts a keyword at most once. */
export function postKeywords(title: string, selftext?: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const sink: TokenSink = {
    push(t) {
      if (!seen.has(t)) {
        seen.add(t);
        out.push(t);
      }
    },
  };
  scanTokens(title, sink);
  if (selftext) scanTokens(selftext, sink);
  return out;
}

/** Keywords of `text` in order (repeats kept) into `sink`. */
export function scanTokens(text: string, sink: TokenSink): void {
  scanRawTokens(text, {
    push(raw) {
      const t = keywordOf(raw);
      if (t !== null) sink.push(t);
    },
  });
}

/**
 * The keyword a raw token (lower-cased, apostrophes removed, 3–40 characters) stands for, or null
 * for a stopword. Split from scanning so hot callers can memoise it per distinct raw token; pass
 * the token's spanHash when known (the stopword test then skips V8's string hashing for most tokens).
 */
export function keywordOf(raw: string, rawHash: number = spanHash(raw)): string | null {
  if (raw.charCodeAt(0) === DOLLAR) {
    // A cashtag names a ticker even when the letters spell a stopword.
    const t = raw.slice(1);
    return t.length >= MIN_TOKEN_LENGTH ? stem(t) : t;
  }
  if (isStopword(raw, rawHash)) return null;
  const t = stem(raw);
  return t !== raw && isStopword(t, spanHash(t)) ? null : t;
}

/** FNV hashes of the stopwords: a number lookup rules most tokens out before any string lookup. */
const STOPWORD_HASHES: ReadonlySet<number> = new Set([...ENGLISH_STOPWORDS].map((w) => spanHash(w) | 0));

function isStopword(token: string, hash: number): boolean {
  return STOPWORD_HASHES.has(hash | 0) && ENGLISH_STOPWORDS.has(token);
}

/**
 * Receives raw tokens (lower-cased, apostrophes removed, 3–40 characters, before stopwords and
 * stemming; also two-letter words written in capitals, and cashtags with their `$`) as spans of a
 * string, with the FNV-1a hash of the span's characters, so a caller can look tokens up without
 * first copying each one into a new string.
 */
export interface SpanSink {
  span(s: string, start: number, end: number, hash: number): void;
}

/** Raw tokens of `text` as strings (see SpanSink). */
export function scanRawTokens(text: string, sink: TokenSink): void {
  scanSpans(text, {
    span(s, start, end) {
      sink.push(s.slice(start, end));
    },
  });
}

/**
 * Hand-rolled scanner (≈3× faster than a Unicode regex with match objects, and it allocates
 * nothing per token). Apostrophes are deleted, not separators; "http://", "https://" and "www." at
 * a token start skip to the next whitespace.
 */
export function scanSpans(text: string, sink: SpanSink): void {
  if (!text) return;
  const s = text.toLowerCase();
  const len = s.length;
  // Capitals are read from the original text, which lines up with `s` unless lower-casing changed lengths.
  const cased = text.length === len;
  let start = -1;
  let apostrophes = 0;
  let letters = true;
  let h = 0;
  for (let i = 0; i <= len; i++) {
    const c = i < len ? s.charCodeAt(i) : 32;
    let width = 1;
    let word: boolean;
    if (c < 128) word = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      width = 2; // astral character: test the whole surrogate pair
      word = WORD_CHAR_RE.test(s.slice(i, i + 2));
    } else word = c !== 0x2019 && WORD_CHAR_RE.test(s[i]);
    if (word) {
      if (start < 0) {
        if ((c === 104 || c === 119) && isUrlAt(s, i)) {
          while (i + 1 < len && !isSpace(s.charCodeAt(i + 1))) i++;
          continue;
        }
        start = i;
        apostrophes = 0;
        letters = true;
        h = FNV_OFFSET;
      }
      if (c < 97 || c > 122) letters = false;
      h = Math.imul(h ^ c, FNV_PRIME);
      if (width === 2) {
        h = Math.imul(h ^ s.charCodeAt(i + 1), FNV_PRIME);
        i++;
      }
    } else if (c === 39 || c === 0x2019) {
      if (start >= 0) apostrophes++;
    } else if (start >= 0) {
      // Length checks before any copy: most discarded tokens never become strings.
      const n = i - start - apostrophes;
      if (letters && apostrophes === 0 && n <= MAX_CASHTAG_LENGTH && start > 0 && s.charCodeAt(start - 1) === DOLLAR) {
        sink.span(s, start - 1, i, spanHashOf(s, start - 1, i));
      } else if (n === 2 && letters && apostrophes === 0 && cased && isCapital(text, start) && isCapital(text, start + 1)) {
        sink.span(s, start, i, h >>> 0);
      } else if (n >= MIN_TOKEN_LENGTH && n <= MAX_TOKEN_LENGTH) {
        if (apostrophes === 0) sink.span(s, start, i, h >>> 0);
        else {
          const t = s.slice(start, i).replace(/['\u2019]/g, '');
          sink.span(t, 0, t.length, h >>> 0);
        }
      }
      start = -1;
    }
  }
}

/** FNV-1a of a whole string, equal to the hash scanSpans gives the same characters. */
export function spanHash(s: string): number {
  return spanHashOf(s, 0, s.length);
}

function spanHashOf(s: string, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

function isCapital(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 65 && c <= 90;
}

function isUrlAt(s: string, i: number): boolean {
  return s.startsWith('http://', i) || s.startsWith('https://', i) || s.startsWith('www.', i);
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0x3000;
}

function isConsonantPair(s: string): boolean {
  const n = s.length;
  if (n < 4) return false; // "add" stays "add"
  const c = s.charCodeAt(n - 1);
  // Undouble "runn" → "run", "stopp" → "stop"; keep "ll", "ss", "zz" ("spelling" → "spell").
  return c === s.charCodeAt(n - 2) && c >= 97 && c <= 122 && !'aeiouylsz'.includes(s[n - 1]);
}

/**
 * One light, deterministic suffix rule; the stem must keep ≥ 3 characters (and a vowel for -ing/-ed),
 * else the token is left alone. Errors such as "movies" → "movy" are accepted: the same word always
 * maps to the same keyword, which is all counting needs.
 */
export function stem(t: string): string {
  const n = t.length;
  if (n <= MIN_TOKEN_LENGTH) return t;
  const last = t.charCodeAt(n - 1);
  if (last === 115 /* s */) {
    if (t.endsWith('ies')) return n - 3 >= 2 ? t.slice(0, n - 3) + 'y' : t;
    if (t.endsWith('sses')) return t.slice(0, n - 2);
    if (t.endsWith('ss') || t.endsWith('us') || t.endsWith('is')) return t;
    if (t.endsWith('es')) {
      const base = t.slice(0, n - 2);
      if (base.length >= 3 && (base.endsWith('x') || base.endsWith('z') || base.endsWith('ch') || base.endsWith('sh'))) return base;
    }
    return n - 1 >= MIN_TOKEN_LENGTH ? t.slice(0, n - 1) : t;
  }
  if (last === 103 /* g */ && t.endsWith('ing')) {
    const base = t.slice(0, n - 3);
    if (base.length >= 3 && VOWEL_RE.test(base)) return isConsonantPair(base) ? base.slice(0, -1) : base;
    return t;
  }
  if (last === 100 /* d */ && t.endsWith('ed') && !t.endsWith('eed')) {
    const base = t.slice(0, n - 2);
    if (base.length >= 3 && VOWEL_RE.test(base)) return isConsonantPair(base) ? base.slice(0, -1) : base;
    return t;
  }
  return t;
}
