#!/usr/bin/env node
'use strict';
// Developers, after changing an entity: writes a migration for the changes into
// src/database/migrations/<driver>/ for the database DATABASE_URL names, which should be a scratch one
// (its pending migrations are applied first). Run it once per driver; it loads the compiled entities,
// so `npm run migrations:generate -- Name` builds first (src/database/README.md). The SQL is the
// schema builder's, the same `trendhooks migrate --check` compares against. Not part of the shipped
// CLI: operators never write into src/.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** The migration class for `name`, from the schema builder's statements. */
function migrationSource(className, drift) {
  const lines = (qs) => qs.map((s) => `    await q.query(${JSON.stringify(s)});`).join('\n');
  return `import { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(q: QueryRunner): Promise<void> {
${lines(drift.up)}
  }

  async down(q: QueryRunner): Promise<void> {
${lines(drift.down)}
  }
}
`;
}

async function main(name) {
  let dist;
  try {
    dist = { config: require(path.join(root, 'dist/config/config.js')), db: require(path.join(root, 'dist/database/data-source.js')), entities: require(path.join(root, 'dist/entities.js')) };
  } catch {
    throw new Error('dist/ is missing or broken: run npm run build first');
  }
  const { DataSource } = require('typeorm');
  const config = dist.config.loadConfig(process.env);
  // TRENDHOOKS_MIGRATIONS_TABLE set: the per-feature series (every feature) a host runs, instead of the standalone's.
  const ds = new DataSource(dist.db.dataSourceOptions(config.database, dist.entities.entitiesFor(config.hostSchema), config.hostSchema));
  await ds.initialize();
  try {
    await dist.db.runMigrations(ds);
    const drift = await dist.db.schemaDrift(ds);
    if (drift.up.length === 0) return console.log('no entity changes; nothing generated');
    const ts = Date.now();
    const file = path.join(root, 'src', 'database', 'migrations', config.database.type, `${ts}-${name}.ts`);
    fs.writeFileSync(file, migrationSource(`${name.replace(/[^A-Za-z0-9]/g, '')}${ts}`, drift));
    console.log(`wrote ${path.relative(root, file)}; add its class to that folder's index.ts (${config.hostSchema ? "to the feature it touches in *_FEATURE_MIGRATIONS" : "*_MIGRATIONS"})`);
  } finally {
    await ds.destroy();
  }
}

const name = process.argv[2];
if (!name) {
  console.error('usage: node scripts/generate-migration.js <Name>  (DATABASE_URL picks the driver)');
  process.exit(2);
}
main(name).catch((err) => {
  console.error(`error: ${err.message.split('\n')[0]}`);
  process.exit(1);
});
