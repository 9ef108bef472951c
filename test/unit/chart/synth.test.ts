import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { writeCustomBuild, writeGeneratedFiles } from '../../../src/cli/synth';
import { PREVIEW_FILE } from '../../../src/chart/custom-build';
import { generatedFiles } from '../../../src/generate';

describe('writeGeneratedFiles', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-synth-'));
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  test('writes every generated file and removes stale ones only from directories it owns', () => {
    const staleTemplate = path.join(out, 'charts/nebari-llm-serving/templates/renamed.yaml');
    const staleBundle = path.join(out, 'deploy/old.yaml');
    const userFile = path.join(out, 'examples/mine.yaml');
    for (const f of [staleTemplate, staleBundle, userFile]) {
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, 'old\n');
    }
    const written = writeGeneratedFiles(out);
    expect(written).toEqual(generatedFiles().map((f) => f.path));
    for (const f of generatedFiles()) expect(fs.readFileSync(path.join(out, f.path), 'utf8')).toBe(f.content);
    expect(fs.existsSync(staleTemplate)).toBe(false);
    expect(fs.existsSync(staleBundle)).toBe(false);
    expect(fs.existsSync(userFile)).toBe(true);
  });
});

describe('writeCustomBuild', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-custom-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'build.yaml');
  const out = path.join(dir, 'out');
  fs.writeFileSync(
    config,
    'values: { platform: { baseDomain: example.com } }\nmodels:\n  - apiVersion: llm.nebari.dev/v1alpha1\n    kind: PassthroughModel\n    metadata: { name: openai }\n' +
      '    spec: { provider: { hostname: api.openai.com, credentialSecretName: k }, models: { declared: [gpt-4o] }, access: { public: true }, endpoints: { internal: { enabled: false } } }\n',
  );

  test('writes the preview into preview/ only when asked, and removes a preview an earlier run left', async () => {
    const withPreview = (await writeCustomBuild(config, out, { preview: true })).files.map((f) => path.relative(out, f));
    expect(withPreview.sort()).toEqual(['manifests.yaml', 'models.yaml', PREVIEW_FILE, 'values.yaml']);
    const without = (await writeCustomBuild(config, out)).files.map((f) => path.relative(out, f));
    expect(without.sort()).toEqual(['manifests.yaml', 'models.yaml', 'values.yaml']);
    expect(fs.existsSync(path.join(out, PREVIEW_FILE))).toBe(false);
  });
});
