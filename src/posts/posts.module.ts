import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { PaginationModule } from '../pagination/pagination.module';
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
 * `GET /v1/users/{username}/posts`), on the connection of TrendhooksModule. The host configures
 * AuthModule and PaginationModule with their forRoot. An IngestListener, if any, comes from a
 * global provider of INGEST_LISTENER (TrendsModule's pipeline).
 */
@Module({
  imports: [DatabaseUnavailableModule, AuthModule, PaginationModule],
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
