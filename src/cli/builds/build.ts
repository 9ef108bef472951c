// A custom build written to disk (docs/custom-builds.md): `nls build --config FILE` in the
// published CLI, and `npm run synth -- --config FILE` in a checkout, which shares this code.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StaticModelError } from '../../../constructs/models';
import { type BuildProvenance, CustomBuildConfigError, customBuildFiles, PREVIEW_FILE, resolveCustomBuild } from '../../chart/custom-build';
import { version } from '../../version';
import { BuildFileError, loadBuildFile, resolveBuildFile } from './build-file';
import { parseFlags } from '../flags';
import { UsageError } from '../phases';

/** The directory above src/ (the checkout, or lib/ of the installed package). */
const root = path.resolve(__dirname, '..', '..', '..');

/**
 * `git rev-parse HEAD` of this checkout, marked when tracked files differ from it; undefined when
 * this code is not the top of a git work tree (an installed package, even inside someone's repository).
 */
function checkoutCommit(): string | undefined {
  const git = (args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    if (path.resolve(git(['rev-parse', '--show-toplevel'])) !== fs.realpathSync(root)) return undefined;
    const commit = git(['rev-parse', 'HEAD']);
    return git(['status', '--porcelain', '--untracked-files=no']) ? `${commit} (with uncommitted changes)` : commit;
  } catch {
    return undefined;
  }
}

/** Where the build's files were made from (see BuildProvenance). */
export function buildProvenance(configFile: string, outDir: string, command: string): BuildProvenance {
  return {
    command,
    buildFile: path.relative(outDir, configFile).split(path.sep).join('/'),
    buildFileSha256: createHash('sha256').update(fs.readFileSync(configFile)).digest('hex'),
    generatorVersion: version,
    commit: checkoutCommit(),
    chartVersion: version,
  };
}

/** Refuses an output path that exists and is not a directory, before anything is written. */
export function checkOutDir(dir: string): void {
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) {
    throw new BuildFileError(`--out: ${dir} is a file; --out names the directory the build's files (values.yaml, models.yaml, manifests.yaml) are written into`);
  }
}

export interface CustomBuildResult {
  readonly files: string[];
  /** Admission warnings of the models, as `nls validate` prints them. */
  readonly warnings: readonly string[];
}

export interface WriteOptions {
  /** Also write the preview of the derived objects. @default false */
  readonly preview?: boolean;
  /** The directory relative paths are resolved from. @default the current directory */
  readonly from?: string;
  /** The command recorded in the files' header. @default `npm run synth -- --config` */
  readonly command?: string;
  /** Without an output directory the files go into `<defaultOut>/<release>`. @default `dist/custom` of this checkout */
  readonly defaultOut?: string;
}

/** Renders a custom build into outDir (default `<defaultOut>/<release>`); returns the written paths and the warnings. */
export async function writeCustomBuild(configFile: string, outDir?: string, options: WriteOptions = {}): Promise<CustomBuildResult> {
  const from = options.from ?? process.cwd();
  const config = resolveBuildFile(configFile, from);
  if (outDir) checkOutDir(path.resolve(from, outDir));
  const build = await resolveCustomBuild(loadBuildFile(config));
  const dir = path.resolve(from, outDir ?? path.join(options.defaultOut ?? path.join(root, 'dist', 'custom'), build.releaseName));
  checkOutDir(dir);
  const provenance = buildProvenance(config, dir, options.command ?? 'npm run synth -- --config');
  const files = customBuildFiles(build, { preview: options.preview, provenance }); // may throw: nothing is written for a bad config
  fs.mkdirSync(dir, { recursive: true });
  // A preview left from an earlier --preview run would look current; remove it when none is written.
  if (!files[PREVIEW_FILE]) fs.rmSync(path.join(dir, PREVIEW_FILE), { force: true });
  const written = Object.entries(files).map(([name, content]) => {
    const target = path.join(dir, name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content);
    return target;
  });
  return { files: written, warnings: build.warnings };
}

/**
 * Writes a build and reports it: warnings and problems on stderr, one per line, prefixed with
 * `prefix`; exit 2 for a bad build file or config, 0 when written.
 */
export async function runCustomBuild(
  args: { config?: string; out?: string; preview?: boolean },
  options: Required<Pick<WriteOptions, 'from' | 'command' | 'defaultOut'>> & { prefix: string },
): Promise<number> {
  const { prefix, from } = options;
  const printWarnings = (warnings: readonly string[]) => warnings.forEach((w) => console.error(`${prefix}: warning: ${w}`));
  try {
    const result = await writeCustomBuild(args.config!, args.out, { ...options, preview: args.preview });
    printWarnings(result.warnings);
    for (const f of result.files) console.log(`${prefix}: custom build wrote ${path.relative(from, f)}`);
    return 0;
  } catch (err) {
    if (err instanceof BuildFileError) {
      console.error(`${prefix}: ${err.message}`);
      return 2;
    }
    if (err instanceof CustomBuildConfigError || err instanceof StaticModelError) {
      if (err instanceof CustomBuildConfigError) printWarnings(err.warnings);
      const problems = err.message.split('\n');
      console.error(`${prefix}: ${args.config} is not a valid build config (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  ${p}`).join('\n')}`);
      return 2;
    }
    throw err;
  }
}

export const buildUsage = `Usage:
  nls build --config FILE [--out DIR] [--preview]
Renders a custom build (docs/custom-builds.md) for a GitOps repository, as \`npm run synth -- --config\`
does in a checkout: values.yaml (the chart values), models.yaml (the model objects to apply after the
chart) and manifests.yaml (the release without Helm), for the chart version of this nls.
  --config FILE   the build file: YAML, JSON, or a .js/.mjs/.cjs module whose default export is the
                  config (.ts/.mts/.cts too, when the typescript package is installed beside it)
  --out DIR       where the files go (default dist/custom/<release>/ in the current directory)
  --preview       also write preview/derived-objects.yaml (for review; never applied)
Exit 0 when written, 2 for bad arguments or a bad build file (every problem is listed).`;

/** `nls build`. */
export async function runBuild(args: string[]): Promise<number> {
  const flags = parseFlags('build', args, { config: { type: 'string' }, out: { type: 'string' }, preview: { type: 'boolean' } });
  if (!flags.values.config) throw new UsageError(`build: --config FILE is required\n${buildUsage}`);
  if (flags.positionals.length > 0) throw new UsageError(`build: unexpected argument ${flags.positionals[0]}; name the build file with --config`);
  const from = process.cwd();
  return runCustomBuild(
    { config: flags.values.config, out: flags.values.out, preview: flags.values.preview },
    { from, command: 'nls build --config', prefix: 'build', defaultOut: path.join(from, 'dist', 'custom') },
  );
}
