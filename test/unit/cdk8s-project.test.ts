// The cdk8s project (cdk8s.yaml): `npx cdk8s synth` writes exactly what `npm run synth` writes, and
// imports/ is what `npm run import` (cdk8s import) generates from the pinned upstream CRDs.
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DEFAULT_UPSTREAM_CRD_DIR, importSpecs, importUpstreamTypes, readCdk8sConfig, upstreamCrdDir } from '../../scripts/import-crds';
import { generatedFiles } from '../../src/generate';

const root = path.resolve(__dirname, '..', '..');
const cdk8s = path.join(root, 'node_modules', '.bin', 'cdk8s');

function listFiles(dir: string, rel = ''): string[] {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(dir, path.join(rel, e.name)) : [path.join(rel, e.name)],
  );
}

describe('cdk8s project', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-cdk8s-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('`npx cdk8s synth` writes the same files as `npm run synth`', () => {
    const out = path.join(tmp, 'synth');
    execFileSync(cdk8s, ['synth', '--no-check-upgrade', '--output', out], { cwd: root, stdio: 'pipe' });
    const expected = generatedFiles();
    expect(listFiles(out).sort()).toEqual(expected.map((f) => f.path).sort());
    const differing = expected.filter((f) => fs.readFileSync(path.join(out, f.path), 'utf8') !== f.content).map((f) => f.path);
    expect(differing).toEqual([]);
  });

  test('import specs read the cdk8s.yaml CRD files from the upstream CRD directory in use', () => {
    const config = { importDirectory: 'imports', imports: [`gateways:=${DEFAULT_UPSTREAM_CRD_DIR}/gateway-api/v1.5.1/standard/gw.yaml`] };
    expect(importSpecs(config, '/crds')).toEqual(['gateways:=/crds/gateway-api/v1.5.1/standard/gw.yaml']);
    expect(() => importSpecs({ ...config, imports: ['gw.yaml'] }, '/crds')).toThrow(/is not NAME:=/);
    expect(readCdk8sConfig().imports.length).toBeGreaterThan(0);
  });

  // A clone without the upstream CRDs beside it skips this locally; under CI it must run (and fails
  // when the CRDs are missing).
  const crdsPresent = fs.existsSync(upstreamCrdDir());
  (crdsPresent || process.env.CI ? test : test.skip)('imports/ is up to date (run `npm run import`)', () => {
    const out = path.join(tmp, 'imports');
    const files = importUpstreamTypes(out);
    const committed = path.join(root, readCdk8sConfig().importDirectory);
    expect(files).toEqual(fs.readdirSync(committed).sort());
    // Names only: the files are large, a full diff would drown the report.
    const stale = files.filter((f) => fs.readFileSync(path.join(out, f), 'utf8') !== fs.readFileSync(path.join(committed, f), 'utf8'));
    expect(stale).toEqual([]);
  });
});
