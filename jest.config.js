// Three projects: `unit` (pure functions, no processes), `integration` (a real kube-apiserver,
// etcd, helm and OCI registry started by test/support/global-setup.ts) and `e2e` (the chart and
// image installed from the registry onto a real kubelet node, test/e2e/support/global-setup.ts).
const transform = {
  '^.+\\.ts$': 'ts-jest',
  // client-node and its ESM-only dependencies must be transpiled to CommonJS for Jest's runtime.
  '^.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs' } }],
};
const transformIgnorePatterns = ['/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose)/)'];

/** @type {import('jest').Config} */
module.exports = {
  // A global option (projects cannot set it): integration tests start processes and wait for them.
  testTimeout: 300000,
  // A leaked handle (socket, timer) must not keep a finished run, failing or not, alive until CI's
  // time limit: exit once the results are in. Global teardown still runs first and stops every
  // process the run started.
  forceExit: true,
  // A global option too: the end-to-end files run in a fixed order (product, then data plane).
  testSequencer: '<rootDir>/test/e2e/support/sequencer.js',
  // Build output holds a copy of package.json; keep it out of Jest's module map.
  modulePathIgnorePatterns: ['<rootDir>/lib/', '<rootDir>/dist/'],
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/e2e/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/e2e/support/global-teardown.ts',
    },
  ],
};
