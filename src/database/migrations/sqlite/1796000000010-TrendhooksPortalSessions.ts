import { PortalSessions1795869639619 } from './1795869639619-PortalSessions';

/** PortalSessions1795869639619 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksPortalSessions1796000000010 extends PortalSessions1795869639619 {
  override name = 'TrendhooksPortalSessions1796000000010';
}
