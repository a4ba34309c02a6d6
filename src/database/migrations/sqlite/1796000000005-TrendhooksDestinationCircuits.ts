import { DestinationCircuits1795835720133 } from './1795835720133-DestinationCircuits';

/** DestinationCircuits1795835720133 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksDestinationCircuits1796000000005 extends DestinationCircuits1795835720133 {
  override name = 'TrendhooksDestinationCircuits1796000000005';
}
