import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const DELIVERY = __dirname;
const WEBHOOKS = resolve(__dirname, '../webhooks');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every module specifier a file imports, re-exports, requires or imports dynamically. */
function specifiers(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]/g)) out.push(m[1]);
  return out;
}

// Webhooks depend on delivery, never the other way round: a host uses DeliveryModule without our webhook routes.
describe('src/delivery imports nothing from src/webhooks', () => {
  it('finds the imports it checks (the scan itself works)', () => {
    expect(specifiers("import { A } from '../x';\nexport * from \"./y\";\nconst z = require('../../z');\nawait import('./w');")).toEqual(['../x', './y', '../../z', './w']);
  });

  it.each(tsFiles(DELIVERY).map((f) => [relative(DELIVERY, f), f]))('%s', (_name, file) => {
    const into = specifiers(readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.'))
      .filter((s) => {
        const target = resolve(dirname(file), s);
        return target === WEBHOOKS || target.startsWith(WEBHOOKS + '/');
      });
    expect(into).toEqual([]);
  });
});
