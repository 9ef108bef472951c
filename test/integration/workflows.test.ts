// The GitHub workflows: actionlint (pinned in tools/release) finds nothing in them, and they run
// what the repository says they run: CI the README's test command via .ci/run, a release tag the
// same `npm run release` the release test exercises. They cannot run here; this is what can be checked.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse as parseYaml } from 'yaml';
import { repoRoot, toolPaths } from '../support/tools';

const workflows = path.join(repoRoot, '.github', 'workflows');

function actionlint(files: string[]): { code: number; output: string } {
  const result = spawnSync(toolPaths().actionlint, ['-no-color', ...files], { cwd: repoRoot, encoding: 'utf8' });
  return { code: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

interface Workflow {
  on: Record<string, { tags?: string[]; branches?: string[] } | null>;
  permissions?: Record<string, string>;
  jobs: Record<string, { steps: { run?: string; uses?: string; with?: Record<string, unknown> }[] }>;
}
const read = (name: string) => parseYaml(fs.readFileSync(path.join(workflows, name), 'utf8')) as Workflow;
const runs = (w: Workflow) => Object.values(w.jobs).flatMap((j) => j.steps.map((s) => s.run ?? '')).join('\n');

test('actionlint finds no problem in the workflows, and does find one in a broken workflow', () => {
  const files = fs.readdirSync(workflows).map((f) => path.join('.github', 'workflows', f));
  expect(files.sort()).toEqual(['.github/workflows/ci.yaml', '.github/workflows/release.yaml']);
  const clean = actionlint(files);
  expect(clean.output).toBe('');
  expect(clean.code).toBe(0);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-actionlint-'));
  const broken = path.join(dir, 'broken.yaml');
  fs.writeFileSync(broken, 'on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo "${{ github.event.head_commit.message }}"\n        shell: bashh\n');
  const found = actionlint([broken]);
  fs.rmSync(dir, { recursive: true, force: true });
  expect(found.code).toBe(1);
  expect(found.output).toMatch(/potentially untrusted/);
});

test('CI runs .ci/run, which runs the README test command', () => {
  const ci = read('ci.yaml');
  expect(Object.keys(ci.on)).toEqual(expect.arrayContaining(['push', 'pull_request']));
  expect(runs(ci)).toContain('bash .ci/run');
  expect(fs.readFileSync(path.join(repoRoot, '.ci', 'run'), 'utf8')).toContain('npm ci && npm test');
});

test('a pushed v* tag runs npm run release keyless with the tag version, with every tag fetched', () => {
  const release = read('release.yaml');
  expect(release.on.push?.tags).toEqual(['v*']);
  expect(release.permissions).toMatchObject({ 'id-token': 'write', contents: 'write' });
  expect(runs(release)).toContain('npm run release -- --version "${TAG#v}" --registry "oci://$REGISTRY" --keyless');
  expect(runs(release)).toContain('bash scripts/build-tools.sh --release');
  const checkout = Object.values(release.jobs)[0].steps.find((s) => s.uses?.startsWith('actions/checkout@'));
  expect(checkout?.with).toMatchObject({ 'fetch-depth': 0 });
});
