// The images the end-to-end suite runs, pushed to its registry on 127.0.0.1 with crane: the
// operator image as `npm run image` built it, a pause image for pod sandboxes (catatonit from
// Debian) and the stand-ins for the engine, model download, endpoint picker and an agent, which
// are small Node programs (test/e2e/standins/) on top of the operator image's Node runtime.
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { repoRoot, toolPaths } from '../../support/tools';

export interface E2eImages {
  readonly operator: { readonly repository: string; readonly tag: string; readonly digest: string };
  readonly pause: string;
  /** Engine (as `python3`), downloader (`sh`, `pip`, `huggingface-cli`) and endpoint picker (entrypoint). */
  readonly standIn: string;
  readonly agent: string;
}

function crane(args: string[]): string {
  return execFileSync(toolPaths().crane, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A layer tar of `files` (path in image → [content or source file, mode]), owned by root. */
function layer(dir: string, name: string, files: Record<string, { from?: string; text?: string; mode: number } | { link: string }>): string {
  const stage = path.join(dir, `${name}-root`);
  for (const [dest, spec] of Object.entries(files)) {
    const target = path.join(stage, dest);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if ('link' in spec) {
      fs.symlinkSync(spec.link, target);
      continue;
    }
    if (spec.from) fs.copyFileSync(spec.from, target);
    else fs.writeFileSync(target, spec.text ?? '');
    fs.chmodSync(target, spec.mode);
  }
  const tar = path.join(dir, `${name}.tar`);
  execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '--sort=name', '-C', stage, '-cf', tar, '.']);
  return tar;
}

/** The operator image's OCI layout written by `npm run image`. */
export function operatorImageLayout(): string {
  const layout = path.join(repoRoot, 'dist', 'image', 'oci');
  if (!fs.existsSync(path.join(layout, 'index.json'))) {
    throw new Error(`no operator image at ${layout}; the e2e suite runs after \`npm run image\` (npm run test:e2e does both)`);
  }
  return layout;
}

export function pushImages(registry: string, version: string): E2eImages {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-e2e-images-'));
  const tools = toolPaths();
  try {
    const repository = `${registry}/nebari/nebari-llm-serving`;
    crane(['push', operatorImageLayout(), `${repository}:${version}`]);
    const digest = crane(['digest', `${repository}:${version}`]);

    const pause = `${registry}/e2e/pause:3.10.1`;
    crane(['append', '--oci-empty-base', '-f', layer(dir, 'pause', { pause: { from: tools.catatonit, mode: 0o755 } }), '-t', `${pause}-wip`]);
    crane(['mutate', `${pause}-wip`, '-t', pause, '--set-platform', 'linux/amd64', '--entrypoint', '/pause,-P', '--user', '65535:65535']);

    const shebang = '#!/nodejs/bin/node\n';
    const standIns = path.join(repoRoot, 'test', 'e2e', 'standins');
    const script = (file: string) => ({ text: shebang + fs.readFileSync(path.join(standIns, file), 'utf8'), mode: 0o755 });
    const tar = layer(dir, 'standins', {
      'bin/busybox': { from: tools.busybox, mode: 0o755 },
      'bin/sh': { link: 'busybox' },
      'usr/bin/python3': script('engine.js'),
      'usr/local/bin/pip': script('pip.js'),
      'usr/local/bin/huggingface-cli': script('huggingface-cli.js'),
      'standin/epp.js': script('epp.js'),
      'standin/agent.js': script('agent.js'),
    });
    const base = `${repository}:${version}`;
    const standIn = `${registry}/e2e/standin:1`;
    const agent = `${registry}/e2e/agent:1`;
    crane(['append', '--platform', 'linux/amd64', '-b', base, '-f', tar, '-t', `${standIn}-wip`]);
    const env = ['--env', 'PATH=/usr/local/bin:/usr/bin:/bin:/nodejs/bin'];
    crane(['mutate', `${standIn}-wip`, '-t', standIn, '--entrypoint', '/nodejs/bin/node,/standin/epp.js', ...env]);
    crane(['mutate', `${standIn}-wip`, '-t', agent, '--entrypoint', '/nodejs/bin/node,/standin/agent.js', ...env]);
    return { operator: { repository, tag: version, digest }, pause, standIn, agent };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
