import * as fs from 'node:fs';
import { NestFactory } from '@nestjs/core';
import type { OpenApiDocument } from '../openapi/document';
import { Command } from 'commander';
import { AppModule } from '../app.module';
import { loadConfig } from '../config/config';
import { buildOpenApiDocument, serialiseOpenApiDocument } from '../openapi/document';
import { CliError } from './support';

/**
 * The standalone app's OpenAPI document without serving or connecting anything: `preview` mode
 * scans the modules but instantiates no provider, so no database is opened. The configuration is
 * the defaults (not the environment), so the output depends on the code alone. It lives beside the
 * CLI, not in src/openapi/, because it needs the whole app (AppModule) that src/openapi/ is part of.
 */
export async function generateOpenApiDocument(): Promise<OpenApiDocument> {
  const app = await NestFactory.create(AppModule.forRoot(loadConfig({ DATABASE_URL: 'sqlite::memory:' })), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

function readTextFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** `trendhooks openapi`: the document to stdout or a file, or CI's check that openapi.json is current. */
export function addOpenApiCommand(program: Command): void {
  program
    .command('openapi')
    .description('print the OpenAPI 3.1 document of the HTTP API, built from the code (nothing is served or connected)')
    .option('--out <file>', 'write it to this file instead of stdout')
    .option('--check <file>', 'exit 1 when this file differs from a fresh generation (CI drift check)')
    .action(async (opts: { out?: string; check?: string }) => {
      const text = serialiseOpenApiDocument(await generateOpenApiDocument());
      if (opts.check) {
        const committed = readTextFile(opts.check);
        if (committed === text) return console.log(`${opts.check} is up to date`);
        console.error(`error: ${opts.check} differs from the code's OpenAPI document; run npm run openapi and commit it`);
        process.exitCode = 1;
        return;
      }
      if (!opts.out) return void process.stdout.write(text);
      try {
        fs.writeFileSync(opts.out, text);
      } catch (err) {
        throw new CliError(`cannot write ${opts.out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      console.log(`wrote ${opts.out}`);
    });
}
