import { EventsBySubscription1795857305975 } from './1795857305975-EventsBySubscription';

/** EventsBySubscription1795857305975 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksEventsBySubscription1796000000008 extends EventsBySubscription1795857305975 {
  override name = 'TrendhooksEventsBySubscription1796000000008';
}
