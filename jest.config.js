/** Two projects: unit specs beside the code, and e2e suites over HTTP in test/. */
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/** The installed packages that are ES modules only ("type": "module"), e.g. Nest 12's. */
function esmPackages(dir = join(__dirname, 'node_modules')) {
  const names = readdirSync(dir).flatMap((n) => (n.startsWith('@') ? readdirSync(join(dir, n)).map((m) => `${n}/${m}`) : [n]));
  return names.filter((n) => {
    try {
      return JSON.parse(readFileSync(join(dir, n, 'package.json'), 'utf8')).type === 'module';
    } catch {
      return false;
    }
  });
}
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
  // Their .js files, to CommonJS (test/support/esm-transform.js); a .cjs file is CommonJS already.
  '^.+\\.m?js$': '<rootDir>/test/support/esm-transform.js',
};
const transformIgnorePatterns = [`/node_modules/(?!(?:${esmPackages().map(escape).join('|')})/)`];
module.exports = {
  // Type checking is `npm run typecheck`'s job; tests transpile file by file (tsconfig.jest.json).
  testTimeout: 30000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/src'],
      testMatch: ['**/*.spec.ts'],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts'],
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
    },
    {
      // Hostile input, load and fault injection: npm run test:reliability (one suite at a time,
      // since some restart a database or measure capacity), a separate step of .ci/run.
      displayName: 'reliability',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.rel-spec.ts'],
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
    },
  ],
};
