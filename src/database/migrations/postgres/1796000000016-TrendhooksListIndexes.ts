import { ListIndexes1796690000001 } from './1796690000001-ListIndexes';

/** ListIndexes1796690000001 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksListIndexes1796000000016 extends ListIndexes1796690000001 {
  override name = 'TrendhooksListIndexes1796000000016';
}
