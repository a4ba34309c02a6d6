import { PortalSessionBudgets1796665370697 } from './1796665370697-PortalSessionBudgets';

/** PortalSessionBudgets1796665370697 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksPortalSessionBudgets1796000000014 extends PortalSessionBudgets1796665370697 {
  override name = 'TrendhooksPortalSessionBudgets1796000000014';
}
