import { EventsBySubscription1795857308893 } from './1795857308893-EventsBySubscription';

/** EventsBySubscription1795857308893 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksEventsBySubscription1796000000008 extends EventsBySubscription1795857308893 {
  override name = 'TrendhooksEventsBySubscription1796000000008';
}
