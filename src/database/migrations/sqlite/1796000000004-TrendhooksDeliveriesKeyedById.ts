import { DeliveriesKeyedById1795523787790 } from './1795523787790-DeliveriesKeyedById';

/** DeliveriesKeyedById1795523787790 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksDeliveriesKeyedById1796000000004 extends DeliveriesKeyedById1795523787790 {
  override name = 'TrendhooksDeliveriesKeyedById1796000000004';
}
