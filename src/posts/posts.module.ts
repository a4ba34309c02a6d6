import { Module } from '@nestjs/common';
import { InjectPrincipalResolver, PrincipalResolver, requirePrincipalResolver } from '../auth/principal';
import { dialectProvider } from '../database/dialect';
import { DatabaseUnavailableModule } from '../database/unavailable';
import { IngestService } from './ingest.service';
import { PostStore } from './post.store';
import { PostgresPostStore } from './post.store.postgres';
import { SqlitePostStore } from './post.store.sqlite';
import { PostsController } from './posts.controller';
import { PostsService } from './posts.service';

/**
 * The posts store and its two routes (`GET /v1/subreddits/{subreddit}/posts`,
 * `GET /v1/users/{username}/posts`). Needs AuthModule and PaginationModule registered (global by
 * default) on the same TypeORM connection. An IngestListener, if any, comes from a global
 * provider of INGEST_LISTENER.
 */
@Module({
  imports: [DatabaseUnavailableModule],
  controllers: [PostsController],
  providers: [
    dialectProvider(PostStore, { sqlite: SqlitePostStore, postgres: PostgresPostStore }),
    PostsService,
    IngestService,
  ],
  exports: [PostStore, PostsService, IngestService],
})
export class PostsModule {
  constructor(@InjectPrincipalResolver() resolver: PrincipalResolver) {
    requirePrincipalResolver(resolver);
  }
}
