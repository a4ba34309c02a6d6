import { Command } from 'commander';
import { plural } from '../common/plural';
import { schemaDrift } from '../database/data-source';
import { describeDatabase } from '../config/config';
import { ConfigSource, withDataSource } from './support';

/**
 * `trendhooks migrate [--check]`: operators apply migrations, CI checks for drift. Writing a new
 * migration is a developer's job, done by scripts/generate-migration.js (src/database/README.md).
 */
export function addMigrateCommand(program: Command, config: ConfigSource): void {
  program
    .command('migrate')
    .description('apply pending database migrations (DATABASE_URL picks the database)')
    .option('--check', 'fail when the entities and the migrations have drifted apart')
    .action(async (opts: { check?: boolean }) => {
      const cfg = config();
      await withDataSource(cfg, async (ds, applied) => {
        if (opts.check) {
          const drift = await schemaDrift(ds);
          if (drift.up.length === 0) return console.log(`no drift on ${cfg.database.type}`);
          console.error(`schema drift on ${cfg.database.type}: the entities need\n  ${drift.up.join(';\n  ')}`);
          process.exitCode = 1;
          return;
        }
        // Say what this run did: a new database gets every migration, an existing one none.
        console.log(applied.length === 0 ? `database is up to date (${describeDatabase(cfg)}); no migration applied` : `applied ${plural(applied.length, 'migration')} to ${describeDatabase(cfg)}: ${applied.join(', ')}`);
      });
    });
}
