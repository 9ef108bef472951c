// `nls storage migrate` argument handling (the migration itself runs against a real API server in
// test/integration/storage-migrate.test.ts).
import { runStorage } from '../../../src/cli/lifecycle/storage';

describe('nls storage', () => {
  it.each([
    [['migrate'], '--crd is required, e.g. --crd llmmodels.llm.nebari.dev'],
    [['rewrite', '--crd', 'x'], 'unknown action "rewrite"; the only action is migrate'],
    [['migrate', '--crd', 'x', '--page-size', '0'], '--page-size is "0"; give a whole number of 1 or more'],
    [['migrate', '--crd', 'x', '--concurrency', 'many'], '--concurrency is "many"; give a whole number of 1 or more'],
    [['migrate', 'llmmodels.llm.nebari.dev'], 'unexpected argument "llmmodels.llm.nebari.dev"; name the CRD with --crd'],
  ])('%j is a usage error (exit 2) that says what to do', async (args, message) => {
    const lines: string[] = [];
    expect(await runStorage(args, (l) => lines.push(l))).toBe(2);
    expect(lines.join('\n')).toContain(message);
  });
});
