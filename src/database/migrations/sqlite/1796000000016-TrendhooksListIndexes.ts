import { ListIndexes1796690000000 } from './1796690000000-ListIndexes';

/** ListIndexes1796690000000 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksListIndexes1796000000016 extends ListIndexes1796690000000 {
  override name = 'TrendhooksListIndexes1796000000016';
}
