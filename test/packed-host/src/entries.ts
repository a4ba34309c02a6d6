// The package's other entries resolve, with their types, under this tsconfig's module resolution.
import type { AppModule, createApp } from 'trendhooks/standalone';
import type { buildCli } from 'trendhooks/cli';

export type StandaloneEntries = [typeof AppModule, typeof createApp, typeof buildCli];
