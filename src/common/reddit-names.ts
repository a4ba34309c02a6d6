/** Reddit's name rules, shared by the webhook body and the posts routes (DECISIONS "Webhook fields"). */

/** Subreddit name with an optional `r/` prefix. */
export const SUBREDDIT_INPUT = /^(?:\/?r\/)?[A-Za-z0-9][A-Za-z0-9_]{2,20}$/;

/** Reddit user name (3–20 letters, digits, `_` or `-`) with an optional `u/` prefix. */
export const USERNAME_INPUT = /^(?:\/?u\/)?[A-Za-z0-9_-]{3,20}$/;

/** Reddit treats subreddit names case-insensitively; the stored and compared form is lower case. */
export function normaliseSubreddit(value: string): string {
  return value.replace(/^\/?r\//, '').toLowerCase();
}

/** User names are case-insensitive on Reddit too; lower case is the lookup key. */
export function normaliseUsername(value: string): string {
  return value.replace(/^\/?u\//, '').toLowerCase();
}
