import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CLOCK, SystemClock } from '../common/clock';
import { POST_ENTITIES } from './entities';
import { IngestService } from './ingest.service';
import { PostRepository } from './post.repository';
import { PostsController } from './posts.controller';
import { PostsService } from './posts.service';

/**
 * The posts store and its two routes (`GET /v1/subreddits/{subreddit}/posts`,
 * `GET /v1/users/{username}/posts`). Needs AuthModule and PaginationModule registered (global by
 * default) on the same TypeORM connection. An IngestListener, if any, comes from a global
 * provider of INGEST_LISTENER.
 */
@Module({
  imports: [TypeOrmModule.forFeature(POST_ENTITIES)],
  controllers: [PostsController],
  providers: [{ provide: CLOCK, useClass: SystemClock }, PostRepository, PostsService, IngestService],
  exports: [PostRepository, PostsService, IngestService],
})
export class PostsModule {}
