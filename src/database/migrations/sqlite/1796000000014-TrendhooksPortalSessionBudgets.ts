import { PortalSessionBudgets1796665365908 } from './1796665365908-PortalSessionBudgets';

/** PortalSessionBudgets1796665365908 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksPortalSessionBudgets1796000000014 extends PortalSessionBudgets1796665365908 {
  override name = 'TrendhooksPortalSessionBudgets1796000000014';
}
