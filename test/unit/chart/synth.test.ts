import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { writeGeneratedFiles } from '../../../src/cli/synth';
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
