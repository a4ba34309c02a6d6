import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { dialectProvider } from '../database/dialect';
import { DeliveryModule } from '../delivery/delivery.module';
import { INGEST_LISTENER } from '../posts/ingest.service';
import { PostsModule } from '../posts/posts.module';
import { SourceStatusReader } from '../webhooks/source-status';
import { SubredditCoverageService } from './coverage.service';
import { RedditClient } from './reddit/reddit.client';
import { TrendSourceLeaseStore } from './reddit/trend-source-lease.store';
import { PostgresTrendSourceLeaseStore } from './reddit/trend-source-lease.store.postgres';
import { SqliteTrendSourceLeaseStore } from './reddit/trend-source-lease.store.sqlite';
import { TrendsPoller } from './reddit/trends.poller';
import { SubredditsController } from './subreddits.controller';
import { TrendsPipeline } from './trends.pipeline';
import { TrendsConfigurableModule } from './trends.options';

/**
 * Trend detection: the pipeline (posts → detectors → events) is the posts module's ingest
 * listener; it emits through DeliveryModule's EventsService. The Reddit poller (`forRoot({ poller:
 * true })`) stores what it reads through PostsModule's IngestService and keeps its leases in
 * `trend_sources`. Coverage (`GET /v1/subreddits/{subreddit}`, Business+) reads what the poller
 * recorded there, and gives webhooks their `source_status` (SourceStatusReader).
 *
 * Global, exporting only INGEST_LISTENER and SourceStatusReader: PostsModule and WebhooksModule sit
 * below trends and find these optional hooks (@Optional) without importing it, which would be an
 * import cycle and would start the pipeline in every host. Everything else stays inside.
 */
@Module({
  imports: [PostsModule, DeliveryModule, AuthModule],
  controllers: [SubredditsController],
  providers: [
    TrendsPipeline,
    { provide: INGEST_LISTENER, useExisting: TrendsPipeline },
    RedditClient,
    dialectProvider(TrendSourceLeaseStore, { sqlite: SqliteTrendSourceLeaseStore, postgres: PostgresTrendSourceLeaseStore }),
    TrendsPoller,
    SubredditCoverageService,
    { provide: SourceStatusReader, useExisting: SubredditCoverageService },
  ],
  exports: [INGEST_LISTENER, SourceStatusReader],
})
export class TrendsModule extends TrendsConfigurableModule {}
