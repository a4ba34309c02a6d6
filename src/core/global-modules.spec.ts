import * as fs from 'node:fs';
import * as path from 'node:path';

const SRC = path.resolve(__dirname, '..');

/**
 * The modules that may be global, each with the reason a host must see it everywhere. Every other
 * module is imported where it is needed, so its `@Module({ imports })` shows what it uses.
 */
const JUSTIFIED: Record<string, string> = {
  'core/trendhooks.module.ts': 'the data source and the one clock, like TypeOrmModule.forRoot',
  'core/configured-module.ts': "a configured module's options only, set once by the host's forRoot",
  'auth/api-keys.module.ts': 'an optional plug-in AuthModule finds; importing it would force API keys on every host',
  'metrics/metrics.options.ts': 'an optional sink; importing it would switch HTTP metrics on in every host',
  'trends/trends.options.ts': 'exports only the hooks posts and webhooks (below trends) consume',
};

const GLOBAL_DECLARATION = /@Global\(\)|\bglobal:\s*true\b|\bisGlobal:\s*true\b/;

/** Line numbers (1-based) of the code lines of `source` that make a module global or default it to global. */
export function globalDeclarations(source: string): number[] {
  const lines: number[] = [];
  source.split('\n').forEach((line, i) => {
    const code = line.trim();
    if (code.startsWith('//') || code.startsWith('*') || code.startsWith('/*')) return;
    if (GLOBAL_DECLARATION.test(code.replace(/\/\/.*$/, ''))) lines.push(i + 1);
  });
  return lines;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [full] : [];
  });
}

describe('global modules', () => {
  it('finds a module made global by @Global(), by global: true, or by an isGlobal extra defaulting to true', () => {
    expect(globalDeclarations("import { Global } from '@nestjs/common';\n@Global()\n@Module({})\nclass A {}")).toEqual([2]);
    expect(globalDeclarations('return { module: B, global: true, providers };')).toEqual([1]);
    expect(globalDeclarations('  .setExtras({ isGlobal: true }, (d, e) => ({ ...d, global: e.isGlobal }))')).toEqual([1]);
    expect(globalDeclarations('  .setExtras({ isGlobal: false }, (d, e) => ({ ...d, global: e.isGlobal }))\n// global: true in a comment')).toEqual([]);
  });

  it('leaves no module under src/ global but the justified ones', () => {
    const found = sourceFiles(SRC)
      .map((file) => path.relative(SRC, file).split(path.sep).join('/'))
      .filter((file) => globalDeclarations(fs.readFileSync(path.join(SRC, file), 'utf8')).length > 0);
    expect(found.filter((file) => !(file in JUSTIFIED))).toEqual([]);
    // A justification nothing needs any more is removed with the global.
    expect(Object.keys(JUSTIFIED).filter((file) => !found.includes(file))).toEqual([]);
  });
});
