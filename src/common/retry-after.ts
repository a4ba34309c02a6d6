/**
 * `Retry-After` (RFC 9110 §10.2.3) as a wait: read by the delivery worker from receivers and by the
 * Reddit client from Reddit, so it lives below both.
 */
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
// RFC 9110 §5.6.7: recipients must accept all three HTTP-date forms; all are GMT.
const IMF_FIXDATE_RE = /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const RFC850_RE = /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const ASCTIME_RE = /^[a-z]{3} ([a-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

/** Epoch ms of an HTTP-date, or null. Parsed by hand: Date.parse reads asctime as local time. */
function parseHttpDate(text: string, now: Date): number | null {
  let day: string, mon: string, year: number, hh: string, mm: string, ss: string;
  let m: RegExpExecArray | null;
  if ((m = IMF_FIXDATE_RE.exec(text))) {
    [, day, mon, , hh, mm, ss] = m;
    year = Number(m[3]);
  } else if ((m = RFC850_RE.exec(text))) {
    [, day, mon, , hh, mm, ss] = m;
    // Two-digit year: a year more than 50 years ahead means the previous century (RFC 9110).
    year = 2000 + Number(m[3]);
    if (year > now.getUTCFullYear() + 50) year -= 100;
  } else if ((m = ASCTIME_RE.exec(text))) {
    [, mon, day, hh, mm, ss] = m;
    year = Number(m[6]);
  } else {
    return null;
  }
  const month = MONTHS.indexOf(mon.toLowerCase());
  if (month < 0) return null;
  const ms = Date.UTC(year, month, Number(day), Number(hh), Number(mm), Number(ss));
  const d = new Date(ms);
  // Reject out-of-range fields (31 Feb, 25:00) that Date.UTC would silently roll over.
  if (
    d.getUTCDate() !== Number(day) ||
    d.getUTCMonth() !== month ||
    d.getUTCHours() !== Number(hh) ||
    d.getUTCMinutes() !== Number(mm) ||
    d.getUTCSeconds() !== Number(ss)
  ) {
    return null;
  }
  return ms;
}

/**
 * A `Retry-After` header as a wait in ms from `now`: delta-seconds or an HTTP-date (a date in
 * the past means 0). null when absent or malformed, so the schedule alone decides. For a
 * repeated header the first value counts.
 */
export function parseRetryAfter(header: string | string[] | undefined, now: Date): number | null {
  const raw = Array.isArray(header) ? header[0] : header;
  if (typeof raw !== 'string') return null;
  const text = raw.trim();
  if (text === '') return null;
  if (/^\d+$/.test(text)) {
    const ms = Number(text) * 1000;
    return Number.isFinite(ms) ? ms : null;
  }
  const at = parseHttpDate(text, now);
  if (at === null) return null;
  return Math.max(0, at - now.getTime());
}
