// `npm run synth`: writes every generated file (CRDs, chart, bundles, docs) into the work tree.
import * as fs from 'fs';
import * as path from 'path';
import { generatedFiles } from '../generate';

const root = path.resolve(__dirname, '..', '..');

export function writeGeneratedFiles(outRoot = root): string[] {
  const written: string[] = [];
  for (const file of generatedFiles()) {
    const target = path.join(outRoot, file.path);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, file.content);
    written.push(file.path);
  }
  return written;
}

if (require.main === module) {
  const written = writeGeneratedFiles();
  console.log(`synth: wrote ${written.length} files; chart: ${path.join(root, 'charts', 'nebari-llm-serving')}`);
}
