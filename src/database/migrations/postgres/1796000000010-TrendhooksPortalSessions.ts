import { PortalSessions1795869640250 } from './1795869640250-PortalSessions';

/** PortalSessions1795869640250 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksPortalSessions1796000000010 extends PortalSessions1795869640250 {
  override name = 'TrendhooksPortalSessions1796000000010';
}
