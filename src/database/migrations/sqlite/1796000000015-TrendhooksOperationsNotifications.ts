import { OperationsNotifications1796677311764 } from './1796677311764-OperationsNotifications';

/** OperationsNotifications1796677311764 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksOperationsNotifications1796000000015 extends OperationsNotifications1796677311764 {
  override name = 'TrendhooksOperationsNotifications1796000000015';
}
