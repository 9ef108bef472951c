// The operator image from scripts/build-image.sh, pushed to the test registry and read back with
// crane: a linux/amd64 + linux/arm64 index, the config the chart relies on (uid 65532, the
// operator entrypoint), no shell or package manager, nothing setuid, the same digest on a
// rebuild, and the amd64 filesystem actually running Node 24, the CLI and the operator as
// nonroot in a chroot (root in the test's namespaces is enough; no container runtime).
import { execFile, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { registryAddress } from '../support/cluster';
import { BuiltImage, buildImage, cranePath } from '../support/image';
import { version } from '../../src/version';

const platforms = ['linux/amd64', 'linux/arm64'];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-image-test-'));
let repo: string;
let image: BuiltImage;

function run(file: string, args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { maxBuffer: 256 * 1024 * 1024, env: opts.env ?? process.env }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed (${err.code ?? err.signal}):\n${stderr}${stdout}`));
      else resolve(stdout);
    });
  });
}

const crane = (...args: string[]): Promise<string> => run(cranePath(), args);

interface Entry {
  readonly mode: string;
  readonly owner: string;
  readonly name: string;
}

/** The flattened filesystem of one platform, as `tar -tv` lists it. */
async function listing(platform: string): Promise<Entry[]> {
  const out = await run('bash', ['-o', 'pipefail', '-c', '"$0" export --platform "$1" "$2" - | tar --numeric-owner -tvf -', cranePath(), platform, image.ref]);
  return out
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      // -rwxr-xr-x 0/0   126891984 1970-01-01 00:00 nodejs/bin/node
      const m = /^(\S+)\s+(\S+)\s+\d+\s+\S+\s+\S+\s+(.*)$/.exec(l);
      if (!m) throw new Error(`unexpected tar listing line: ${l}`);
      const name = m[3].replace(/ -> .*$/, '').replace(/^\.?\//, '').replace(/\/$/, '');
      return { mode: m[1], owner: m[2], name };
    });
}

beforeAll(async () => {
  repo = `${registryAddress()}/nebari/nebari-llm-serving`;
  image = await buildImage({ push: `${repo}:${version}` });
}, 600000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('the pushed index has linux/amd64 and linux/arm64, and the reported sizes', async () => {
  expect(image.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect((await crane('digest', image.ref)).trim()).toBe(image.digest);
  const index = JSON.parse(await crane('manifest', image.ref));
  expect(index.mediaType).toBe('application/vnd.oci.image.index.v1+json');
  const found = (index.manifests as { platform: { os: string; architecture: string } }[]).map((m) => `${m.platform.os}/${m.platform.architecture}`);
  expect(found.sort()).toEqual(platforms);
  for (const p of platforms) {
    const manifest = JSON.parse(await crane('manifest', '--platform', p, image.ref));
    const layers = manifest.layers as { size: number; digest: string }[];
    expect(layers).toHaveLength(4);
    expect(image.sizes[p].compressed).toBe(layers.reduce((sum, l) => sum + l.size, 0));
  }
  // deps and app layers are arch independent: one blob for both platforms.
  const [amd, arm] = await Promise.all(platforms.map(async (p) => JSON.parse(await crane('manifest', '--platform', p, image.ref)).layers as { digest: string }[]));
  expect(arm[2].digest).toBe(amd[2].digest);
  expect(arm[3].digest).toBe(amd[3].digest);
  expect(arm[1].digest).not.toBe(amd[1].digest);
});

test.each(platforms)('%s config: nonroot user, operator entrypoint, no shell in PATH', async (platform) => {
  const config = JSON.parse(await crane('config', '--platform', platform, image.ref));
  expect(`${config.os}/${config.architecture}`).toBe(platform);
  expect(config.config.User).toBe('65532:65532');
  expect(config.config.Entrypoint).toEqual(['/nodejs/bin/node', '/app/lib/src/operator/main.js']);
  expect(config.config.Cmd ?? []).toEqual([]);
  expect(config.config.WorkingDir).toBe('/app');
  expect(config.config.Env).toEqual(expect.arrayContaining(['PATH=/nodejs/bin', 'NODE_ENV=production']));
  expect(Object.keys(config.config.ExposedPorts).sort()).toEqual(['8080/tcp', '8081/tcp', '9443/tcp']);
  expect(config.config.Labels).toMatchObject({ 'org.opencontainers.image.version': version });
  expect(config.created).toBe('0001-01-01T00:00:00Z');
});

test.each(platforms)('%s filesystem: no shell or package manager, nothing setuid, root-owned', async (platform) => {
  const entries = await listing(platform);
  const names = new Set(entries.map((e) => e.name));
  for (const must of ['nodejs/bin/node', 'app/lib/src/operator/main.js', 'app/lib/src/cli/main.js', 'etc/passwd', 'etc/ssl/certs/ca-certificates.crt', 'etc/os-release', 'tmp']) {
    expect(names).toContain(must);
  }
  for (const shell of ['bin/sh', 'usr/bin/sh', 'bin/bash', 'usr/bin/bash', 'bin/dash', 'bin/busybox', 'usr/bin/dpkg', 'usr/bin/apt', 'usr/bin/apt-get']) {
    expect(names).not.toContain(shell);
  }
  expect(entries.filter((e) => /^(s?bin|usr\/s?bin)\//.test(e.name)).map((e) => e.name)).toEqual([]);
  expect(entries.filter((e) => /^.{3}[sS]|^.{6}[sS]/.test(e.mode)).map((e) => e.name)).toEqual([]);
  // Outside /app, the only executables are node and the shared libraries the loader maps.
  const executables = entries.filter((e) => e.mode.startsWith('-') && /x/.test(e.mode) && !e.name.startsWith('app/')).map((e) => e.name);
  expect(executables).toContain('nodejs/bin/node');
  expect(executables.filter((n) => n !== 'nodejs/bin/node' && !/^(usr\/)?lib(64)?\/.*\.so(\.[0-9.]+)?$/.test(n))).toEqual([]);
  // Read-only for the runtime user: everything root's but its home.
  expect(entries.filter((e) => e.owner !== '0/0').map((e) => `${e.name} ${e.owner}`)).toEqual(['home/nonroot 65532/65532']);
  expect(entries.find((e) => e.name === 'tmp')?.mode).toBe('drwxrwxrwt');
});

test('a rebuild from the same commit gives the same index digest', async () => {
  const again = await buildImage({ push: `${repo}:rebuild`, skipBuild: true });
  expect(again.digest).toBe(image.digest);
  expect(again.sizes).toEqual(image.sizes);
}, 600000);

describe('the linux/amd64 filesystem, run in a chroot as 65532', () => {
  const rootfs = path.join(tmp, 'rootfs');
  const chroot = (args: string[], env: NodeJS.ProcessEnv = {}) => run('/usr/sbin/chroot', ['--userspec=65532:65532', rootfs, ...args], { env });

  beforeAll(async () => {
    fs.mkdirSync(rootfs);
    await run('bash', ['-o', 'pipefail', '-c', '"$0" export --platform linux/amd64 "$1" - | tar -x -C "$2"', cranePath(), image.ref, rootfs]);
    // Container runtimes mount these; the image has neither.
    fs.mkdirSync(path.join(rootfs, 'proc'));
    fs.mkdirSync(path.join(rootfs, 'dev'));
  });

  test('Node 24 runs as nonroot', async () => {
    const out = await chroot(['/nodejs/bin/node', '-e', 'console.log(process.version, require("os").userInfo().username)']);
    expect(out.trim()).toMatch(/^v24\.\d+\.\d+ nonroot$/);
  });

  test('there is no shell to run', async () => {
    await expect(chroot(['/bin/sh', '-c', 'true'])).rejects.toThrow();
  });

  test('the CLI (nls) prints the package version', async () => {
    expect((await chroot(['/nodejs/bin/node', '/app/lib/src/cli/main.js', 'version'])).trim()).toBe(version);
  });

  test('the operator entrypoint loads and starts', async () => {
    // No cluster here: it is enough that every module loaded and it logged its start.
    const proc = spawn('/usr/sbin/chroot', ['--userspec=65532:65532', rootfs, '/nodejs/bin/node', '/app/lib/src/operator/main.js'], {
      env: { POD_NAMESPACE: 'image-test', POD_NAME: 'image-test-0' },
    });
    let output = '';
    proc.stdout.on('data', (d) => (output += d));
    proc.stderr.on('data', (d) => (output += d));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start line within 60 s:\n${output}`)), 60000);
        const check = () => {
          if (/"msg":"starting"/.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        };
        proc.stdout.on('data', check);
        proc.stderr.on('data', check);
        proc.on('exit', (code) => {
          clearTimeout(timer);
          if (/"msg":"starting"/.test(output)) resolve();
          else reject(new Error(`the operator exited (${code}) before starting:\n${output}`));
        });
      });
    } finally {
      proc.kill('SIGKILL');
    }
    expect(output).toContain(`"version":"${version}"`);
  });
});
