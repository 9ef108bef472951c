// `npm run import`: regenerates imports/ (typed cdk8s classes for the upstream CRDs the generator
// emits) with `cdk8s import` from the `imports:` list in cdk8s.yaml. Those entries name the CRD
// files under ../shared/upstream-crds, the default place beside this repository; with
// NLS_UPSTREAM_CRD_DIR set, the same files are read from there instead. The CRDs are only read,
// never copied into the repository.
//   npm run import [-- --out dir]   writes into dir instead of imports/ (the staleness test does)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';

const root = path.resolve(__dirname, '..');

/** How cdk8s.yaml spells the upstream CRD directory (relative to the repository root). */
export const DEFAULT_UPSTREAM_CRD_DIR = '../shared/upstream-crds';

/** The released upstream CRDs, read in place: NLS_UPSTREAM_CRD_DIR or the default beside the repository. */
export function upstreamCrdDir(): string {
  return path.resolve(root, process.env.NLS_UPSTREAM_CRD_DIR ?? DEFAULT_UPSTREAM_CRD_DIR);
}

interface Cdk8sConfig {
  importDirectory: string;
  imports: string[];
}

export function readCdk8sConfig(): Cdk8sConfig {
  return parse(fs.readFileSync(path.join(root, 'cdk8s.yaml'), 'utf8')) as Cdk8sConfig;
}

/** cdk8s.yaml's `imports:` with each CRD path moved to the upstream CRD directory in use. */
export function importSpecs(config: Cdk8sConfig = readCdk8sConfig(), crdDir = upstreamCrdDir()): string[] {
  const prefix = `${DEFAULT_UPSTREAM_CRD_DIR}/`;
  return config.imports.map((spec) => {
    const [name, file] = spec.split(':=');
    if (!file?.startsWith(prefix)) throw new Error(`cdk8s.yaml: import "${spec}" is not NAME:=${prefix}<file>`);
    return `${name}:=${path.join(crdDir, file.slice(prefix.length))}`;
  });
}

/**
 * Runs `cdk8s import` for every spec into outDir (emptied first). The CLI reads its list from a
 * cdk8s.yaml in its working directory, so it runs in a scratch directory holding the rewritten list.
 */
export function importUpstreamTypes(outDir: string, specs = importSpecs()): string[] {
  for (const spec of specs) {
    const file = spec.split(':=')[1];
    if (!fs.existsSync(file)) throw new Error(`upstream CRD ${file} not found (see README: obtaining the upstream CRDs)`);
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-cdk8s-import-'));
  try {
    fs.writeFileSync(path.join(scratch, 'cdk8s.yaml'), stringify({ language: 'typescript', imports: specs }));
    fs.rmSync(outDir, { recursive: true, force: true });
    const cli = path.join(root, 'node_modules', '.bin', 'cdk8s');
    execFileSync(cli, ['import', '--no-check-upgrade', '--output', path.resolve(outDir)], { cwd: scratch, stdio: 'pipe' });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return fs.readdirSync(outDir).sort();
}

if (require.main === module) {
  const i = process.argv.indexOf('--out');
  const out = i > 0 ? process.argv[i + 1] : path.join(root, readCdk8sConfig().importDirectory);
  try {
    const files = importUpstreamTypes(out);
    console.log(`import: wrote ${files.length} files into ${path.relative(process.cwd(), out) || '.'} from ${upstreamCrdDir()}`);
  } catch (err) {
    console.error(`import: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
