import { TrendSourceEntity } from './trend-source.entity';

/** The tables TrendsModule reads and writes (the poller's leases); the composition root adds them to the connection. */
export const TREND_ENTITIES = [TrendSourceEntity];
