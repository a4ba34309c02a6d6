import { Entity, PrimaryColumn, Column, Index } from 'typeorm';
import { TimestampColumn } from '../database/columns';

@Entity('posts')
// Both posts routes page newest first over (created_at, id); each has its own index so a deep
// page is one index range scan.
@Index('idx_posts_subreddit_created', ['subreddit', 'createdAt', 'id'])
@Index('idx_posts_author_created', ['authorKey', 'createdAt', 'id'])
export class PostEntity {
  /** Reddit's base-36 id without the `t3_` prefix. */
  @PrimaryColumn({ type: 'varchar', length: 16 })
  id: string;

  /** Lower-cased subreddit name. */
  @Column({ type: 'varchar', length: 21 })
  subreddit: string;

  /** Author as Reddit spells it (`[deleted]` included). */
  @Column({ type: 'varchar', length: 40 })
  author: string;

  /** Lower-cased author, for the case-insensitive user route. */
  @Column({ type: 'varchar', length: 40, name: 'author_key' })
  authorKey: string;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'text', default: '' })
  selftext: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text' })
  permalink: string;

  @Column({ type: 'integer', default: 0 })
  score: number;

  @Column({ type: 'integer', name: 'num_comments', default: 0 })
  numComments: number;

  /** Reddit's created_utc, in ms. */
  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;

  @TimestampColumn({ name: 'first_seen_at' })
  firstSeenAt: Date;

  @TimestampColumn({ name: 'updated_at' })
  updatedAt: Date;
}
