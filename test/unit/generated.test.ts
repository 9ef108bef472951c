// The committed generated files (crds/, charts/, deploy/, generated docs) must equal what the
// sources produce; run `npm run synth` and commit when this fails.
import * as fs from 'fs';
import * as path from 'path';
import { generatedFiles } from '../../src/generate';

const root = path.resolve(__dirname, '..', '..');
const generatedDirs = ['crds', 'charts/nebari-llm-serving', 'deploy'];

function listFiles(dir: string): string[] {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );
}

describe('generated files', () => {
  const files = generatedFiles();

  it('have unique paths', () => {
    const paths = files.map((f) => f.path);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it.each(files.map((f) => [f.path, f] as const))('%s is up to date (run `npm run synth`)', (file, generated) => {
    const onDisk = path.join(root, file);
    expect(fs.existsSync(onDisk)).toBe(true);
    expect(fs.readFileSync(onDisk, 'utf8')).toBe(generated.content);
  });

  it('leave no stale file behind in the generated directories', () => {
    const expected = new Set(files.map((f) => f.path));
    const stale = generatedDirs.flatMap(listFiles).filter((f) => !expected.has(f));
    expect(stale).toEqual([]);
  });
});
