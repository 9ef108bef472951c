// Builds the operator image with scripts/build-image.sh and pushes it to a registry (the test
// registry from global setup, say), for the image test and the end-to-end suite. crane and the
// registry come from the tools cache; a missing one fails the run, it is never a reason to skip.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { repoRoot, toolPaths } from './tools';

export interface LayerSize {
  readonly compressed: number;
  readonly uncompressed: number;
}

/** Per platform (`linux/amd64`, `linux/arm64`): totals and each layer (`1-base` … `4-app`). */
export type ImageSizes = Record<string, LayerSize & { readonly layers: Record<string, LayerSize> }>;

export interface BuiltImage {
  /** Digest of the multi-arch index, `sha256:…`. */
  readonly digest: string;
  /** The reference pushed to, as given. */
  readonly ref: string;
  readonly sizes: ImageSizes;
}

/** go-containerregistry's crane from the tools cache. */
export function cranePath(): string {
  const crane = path.join(toolPaths().binDir, 'crane');
  if (!fs.existsSync(crane)) throw new Error(`${crane} is missing: build the tools with \`npm run tools\` (needs Go)`);
  return crane;
}

/**
 * Runs `scripts/build-image.sh --push <push>` (plus `--skip-build`: use lib/ as it is). The
 * results directory is private to the call, so dist/image is left alone. The downloads must be
 * in the cache already when this runs without network (run `npm run image` once).
 */
export async function buildImage(opts: { push: string; skipBuild?: boolean }): Promise<BuiltImage> {
  cranePath();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-image-'));
  try {
    const args = [path.join(repoRoot, 'scripts', 'build-image.sh'), '--push', opts.push, '--out', out];
    if (opts.skipBuild) args.push('--skip-build');
    await new Promise<void>((resolve, reject) => {
      execFile('bash', args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`scripts/build-image.sh failed (${err.code ?? err.signal}):\n${stderr.slice(-8000)}${stdout.slice(-2000)}`));
        else resolve();
      });
    });
    const digest = fs.readFileSync(path.join(out, 'digest'), 'utf8').trim();
    const sizes = JSON.parse(fs.readFileSync(path.join(out, 'sizes.json'), 'utf8')) as ImageSizes;
    return { digest, ref: opts.push, sizes };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}
