import { TrendSourcesUnreachable1795900000000 } from './1795900000000-TrendSourcesUnreachable';

/** TrendSourcesUnreachable1795900000000 for a host's own migrations table (the posts feature, which holds trend_sources): the same statements, its own name. */
export class TrendhooksTrendSourcesUnreachable1796000000011 extends TrendSourcesUnreachable1795900000000 {
  override name = 'TrendhooksTrendSourcesUnreachable1796000000011';
}
