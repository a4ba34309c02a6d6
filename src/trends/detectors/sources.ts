/**
 * Who stands behind a post, so that a burst from one or two accounts reposting a title is not
 * counted as many independent voices. A known author is one source however many posts they make;
 * when the author is unknown (`[deleted]`, removed, or not given) the post's title stands in for
 * it: posts whose titles have the same letters and digits (case, spacing and punctuation aside) are
 * one source, so reposts of a title still count once while different titles count apart.
 */
/** Author values that say the author is not known. */
const UNKNOWN_AUTHORS: ReadonlySet<string> = new Set(['', '[deleted]', '[removed]']);

/**
 * Letters, digits, `-` and `_`: what a Reddit username is made of. Anything else is a stand-in
 * (pseudonymised dumps write a deleted author as `u_del:<post id>`, one per post), which would make
 * every deleted post a separate author.
 */
const USERNAME = /^[A-Za-z0-9_-]+$/;

/** The author's lower-cased name, or null when the post does not say who wrote it. */
export function knownAuthor(author: string | undefined | null): string | null {
  if (author === undefined || author === null || UNKNOWN_AUTHORS.has(author) || !USERNAME.test(author)) return null;
  return author.toLowerCase();
}

const NOT_LETTER_OR_DIGIT = /[^\p{L}\p{N}]+/gu;

/**
 * The title's letters and digits, lower-cased: the same for near-identical titles ("SOS to the
 * moon!!" and "sos TO THE MOON"), case, spacing, punctuation and emoji aside. Cheap: every post
 * without an author passes here.
 */
export function titleSignature(title: string): string {
  return title.toLowerCase().replace(NOT_LETTER_OR_DIGIT, '');
}

/**
 * The source key of a post: `u/<author>` when known, else `t/<title signature>`, else (a title of
 * no letter or digit) `p/<id>`: a post nobody can group.
 */
export function postSource(post: { readonly id: string; readonly title: string; readonly author?: string | null }): string {
  const author = knownAuthor(post.author);
  if (author !== null) return `u/${author}`;
  const sig = titleSignature(post.title);
  return sig === '' ? `p/${post.id}` : `t/${sig}`;
}
