import { Module } from '@nestjs/common';
import { dialectProvider } from '../database/dialect';
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
 * listener. Needs DeliveryModule (global by default: EventsService) on the same connection.
 * The Reddit poller (`forRoot({ poller: true })`) stores what it reads through PostsModule's
 * IngestService and keeps its leases in `trend_sources`. Coverage (`GET /v1/subreddits/{subreddit}`,
 * Business+) reads what the poller recorded there, and gives webhooks their `source_status`
 * (SourceStatusReader, found by WebhooksModule since this module is global).
 */
@Module({
  imports: [PostsModule],
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
  exports: [TrendsPipeline, INGEST_LISTENER, RedditClient, TrendsPoller, SubredditCoverageService, SourceStatusReader],
})
export class TrendsModule extends TrendsConfigurableModule {}
