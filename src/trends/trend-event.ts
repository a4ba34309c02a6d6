import { createHash } from 'node:crypto';
import { crockfordBase32 } from '../common/base32';
import { definitionOf, Detection, EventKind, TrendEventDataByKind } from '../events/catalogue';
import type { PostEntity } from '../posts/post.entity';
import { eventKey } from './detectors';
import type { ObservedPost } from './subreddit-trends';

/** `evt_` + 26 base32 characters of SHA-256(event key): the same detection always has the same id. */
export function trendEventId(key: string): string {
  return `evt_${crockfordBase32(createHash('sha256').update(key).digest(), 26)}`;
}

/** A trend event before delivery: deterministic id, the detector's evidence as typed snake_case `data`. */
export interface TrendEvent<K extends EventKind = EventKind> {
  id: string;
  type: K;
  createdAt: Date;
  data: TrendEventDataByKind[K];
}

/** The event a detection becomes: its kind's definition in the event catalogue says how. */
export function toTrendEvent(subreddit: string, d: Detection): TrendEvent {
  const kind = definitionOf(d);
  const { windowStartMs, discriminator, createdAtMs } = kind.identity(d);
  return { id: trendEventId(eventKey(d.kind, subreddit, windowStartMs, discriminator)), type: d.kind, createdAt: new Date(createdAtMs), data: kind.toData(d) };
}

/** What the detectors see of a stored post (the pipeline and the `backtest --posts` replay alike). */
export function observedPost(p: PostEntity): ObservedPost {
  return {
    id: p.id,
    createdAtMs: p.createdAt.getTime(),
    author: p.author,
    title: p.title,
    selftext: p.selftext,
    permalink: p.permalink,
    score: p.score,
    numComments: p.numComments,
  };
}
