/** Two projects: unit specs beside the code, and e2e suites over HTTP in test/. */
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
};
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
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts'],
      transform,
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
      globalSetup: '<rootDir>/test/support/global-setup.ts',
    },
  ],
};
