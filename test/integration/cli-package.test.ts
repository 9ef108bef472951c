// The published package: `npm pack` builds lib/ (prepack) and `npm install -g <tgz>` gives a
// working `nls`. The test network has only loopback, and `npm ci` fills npm's cache with package
// tarballs but not with registry metadata. So a loopback stand-in registry answers metadata
// requests from package-lock.json (versions, dependencies, integrity); the tarballs themselves come
// from npm's cache by integrity (their URLs point at the stand-in, which has none to give).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as ts from 'typescript';
import { repoRoot } from './operator-support';

const run = promisify(execFile);

/** The installed nls, as a user runs it: exit code, stdout and stderr apart; no kubeconfig unless `env` names one. */
function nlsRun(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = fs.mkdtempSync(path.join(tmp, 'home-'));
  return new Promise((resolve) => {
    execFile(nls, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: home, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };

interface LockEntry {
  version: string;
  integrity?: string;
  inBundle?: boolean;
  link?: boolean;
  [field: string]: unknown;
}

/** Registry metadata (packuments) for every package in the lockfile. */
function packuments(tarballBase: string): Map<string, Record<string, unknown>> {
  const lock = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const nameOf = (p: string) => p.slice(p.lastIndexOf('node_modules/') + 'node_modules/'.length);
  // A package's bundled dependencies ship inside its tarball; the lockfile marks them inBundle.
  const bundled = new Map<string, string[]>();
  for (const [p, e] of Object.entries(lock.packages)) {
    if (!e.inBundle) continue;
    const parent = p.slice(0, p.lastIndexOf('/node_modules/'));
    if (!lock.packages[parent]?.inBundle) bundled.set(parent, [...(bundled.get(parent) ?? []), nameOf(p)]);
  }
  const out = new Map<string, Record<string, unknown>>();
  for (const [p, e] of Object.entries(lock.packages)) {
    if (!p || !e.integrity || e.link || e.inBundle) continue;
    const name = nameOf(p);
    const doc = out.get(name) ?? { name, versions: {} as Record<string, unknown> };
    const fields = ['dependencies', 'optionalDependencies', 'peerDependencies', 'peerDependenciesMeta', 'bin', 'engines', 'os', 'cpu'];
    (doc.versions as Record<string, unknown>)[e.version] = {
      name,
      version: e.version,
      ...Object.fromEntries(fields.filter((f) => e[f] !== undefined).map((f) => [f, e[f]])),
      ...(bundled.has(p) ? { bundleDependencies: bundled.get(p) } : {}),
      dist: { tarball: `${tarballBase}/${name}/-/${name.split('/').pop()}-${e.version}.tgz`, integrity: e.integrity },
    };
    doc['dist-tags'] = { latest: e.version };
    out.set(name, doc);
  }
  return out;
}

let server: http.Server;
/** The `nls` the first test installs. */
let nls = '';
let registry: string;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-package-'));

beforeAll(async () => {
  server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registry = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const docs = packuments(registry);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const doc = docs.get(decodeURIComponent((req.url ?? '/').slice(1)));
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc ?? { error: 'not found' }));
  });
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  fs.rmSync(tmp, { recursive: true, force: true });
});

it('npm pack builds a package whose global install gives a working nls', async () => {
  const packed = await run('npm', ['pack', '--pack-destination', tmp], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
  const tgz = path.join(tmp, `${pkg.name}-${pkg.version}.tgz`);
  expect(packed.stdout.trim().split('\n').pop()).toBe(path.basename(tgz));
  const files = (await run('tar', ['tzf', tgz])).stdout.split('\n');
  expect(files).toEqual(expect.arrayContaining(['package/lib/src/cli/main.js', 'package/README.md', 'package/LICENSE', 'package/CHANGELOG.md']));
  expect(files.some((f) => f.startsWith('package/test/') || f.startsWith('package/src/'))).toBe(false);

  const prefix = path.join(tmp, 'prefix');
  await run('npm', ['install', '-g', '--prefer-offline', '--no-audit', '--no-fund', '--registry', registry, '--prefix', prefix, tgz], { cwd: tmp, maxBuffer: 64 * 1024 * 1024 });
  nls = path.join(prefix, 'bin', 'nls');
  expect((await run(nls, ['version'])).stdout.trim()).toBe(pkg.version);
  expect((await run(nls, ['--help'])).stdout).toContain('Usage: nls <command> [arguments]');
  // The offline admission (CEL evaluator and all) works from the compiled package.
  // examples/ as a newcomer runs it (v1beta1 only), and, separately, the v1alpha1 forms (same names).
  const validated = await run(nls, ['validate', path.join(repoRoot, 'examples')]);
  expect(validated.stdout).toMatch(/(\d+) object\(s\) checked: \1 admitted, 0 rejected/);
  const legacy = await run(nls, ['validate', path.join(repoRoot, 'docs', 'v1alpha1-examples')]);
  expect(legacy.stdout).toMatch(/(\d+) object\(s\) checked: \1 admitted, 0 rejected/);
  expect(legacy.stdout).toContain('warning: llm.nebari.dev/v1alpha1 PassthroughModel is deprecated');
}, 300_000);

describe('the installed nls behaves like kubectl and helm', () => {
  const kubeconfig = () => {
    const file = path.join(tmp, 'kubeconfig');
    fs.writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'dev', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'dev',
      }),
    );
    return file;
  };

  it('nls wait-webhooks -n NS (as docs/installation.md writes it) takes -n; bad arguments exit 2 with the error on stderr', async () => {
    expect(nls).not.toBe('');
    const bad = await nlsRun(['wait-webhooks', '-n', 'nebari-llm-serving-system', '--timeout', 'soon']);
    expect(bad).toEqual({ code: 2, stdout: '', stderr: expect.stringMatching(/^error: --timeout "soon" is not a duration/) });
  });

  it('without any kubeconfig a cluster command says where it looked and what to pass, on stderr, exit 2; an unreachable one fails fast', async () => {
    const none = await nlsRun(['wait-webhooks', '-n', 'nebari-llm-serving-system', '--timeout', '2s']);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^error: no kubeconfig found \(checked \$KUBECONFIG, .*\/\.kube\/config, in-cluster\); use --kubeconfig\n$/);
    // A kubeconfig whose server does not answer: a few probes, not the whole --timeout.
    const unreachable = await nlsRun(['wait-webhooks', '-n', 'nebari-llm-serving-system', '--timeout', '600s', '--kubeconfig', kubeconfig()]);
    // Progress lines on stdout, the error on stderr.
    expect(unreachable).toMatchObject({ code: 1, stdout: expect.stringMatching(/^(waiting \(.*\n)*$/), stderr: expect.stringMatching(/^error: cannot connect to the API server \(connect ECONNREFUSED 127\.0\.0\.1:1\); check --kubeconfig and --context/) });
    const verify = await nlsRun(['verify', '-n', 'nebari-llm-serving-system', '-o', 'json']);
    expect(verify).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('error: no kubeconfig found') });
  });

  it('nls keys takes -n, -o and --context; its bad arguments exit 2 as every command\'s do', async () => {
    const context = await nlsRun(['keys', 'list', '--model', 'm', '-n', 'llm', '-o', 'json', '--kubeconfig', kubeconfig(), '--context', 'prod']);
    expect(context).toEqual({ code: 2, stdout: '', stderr: 'error: --context prod is not in the kubeconfig; its contexts: dev\n' });
    const action = await nlsRun(['keys', 'rotate', '--model', 'm']);
    expect(action.code).toBe(2);
    expect(action.stderr).toMatch(/^error: keys: unknown action "rotate"/);
    expect((await nlsRun(['nosuch'])).stderr).toMatch(/^error: unknown command "nosuch"/);
  });
});

describe('nls build: a custom build from the published package alone (issue 30, item 12)', () => {
  const model =
    'models:\n  - apiVersion: llm.nebari.dev/v1alpha1\n    kind: PassthroughModel\n    metadata: { name: openai }\n' +
    '    spec: { provider: { hostname: api.openai.com, credentialSecretName: k }, models: { declared: [gpt-4o] }, access: { groups: [ml-team] } }\n';
  const values = 'values:\n  platform: { baseDomain: example.com, jwt: { issuer: "https://keycloak.example.com/realms/nebari", audiences: [nebari-llm] } }\n';

  it('writes values.yaml and models.yaml with their provenance, prints the admission warnings, and lists every problem of a bad build (exit 2)', async () => {
    expect(nls).not.toBe('');
    const repo = fs.mkdtempSync(path.join(tmp, 'gitops-'));
    fs.writeFileSync(path.join(repo, 'build.yaml'), values + model);
    const built = await nlsRun(['build', '--config', 'build.yaml', '--out', 'out'], {}, repo);
    expect(built.code).toBe(0);
    expect(built.stderr).toContain('build: warning: models[0] (PassthroughModel openai): llm.nebari.dev/v1alpha1 PassthroughModel is deprecated');
    const header = fs.readFileSync(path.join(repo, 'out', 'values.yaml'), 'utf8').split('\n').slice(0, 4);
    // No commit: an installed package is no checkout.
    expect(header).toEqual([
      '# Generated by `nls build --config` from the TypeScript sources; do not edit by hand.',
      expect.stringMatching(/^# Build file: \.\.\/build\.yaml \(sha256 [0-9a-f]{64}\)$/),
      `# Generator: nebari-llm-serving ${pkg.version}`,
      `# Chart version: ${pkg.version} (install the nebari-llm-serving chart of this version with these files)`,
    ]);
    expect(fs.readFileSync(path.join(repo, 'out', 'models.yaml'), 'utf8')).toContain('kind: PassthroughModel');
    // A JavaScript module needs nothing beyond the package.
    fs.writeFileSync(path.join(repo, 'build.mjs'), "export default { release: { name: 'from-mjs' } };\n");
    expect((await nlsRun(['build', '--config=build.mjs'], {}, repo)).code).toBe(0);
    expect(fs.existsSync(path.join(repo, 'dist', 'custom', 'from-mjs', 'values.yaml'))).toBe(true);

    fs.writeFileSync(path.join(repo, 'bad.yaml'), 'values:\n  operator: { replica: 2 }\n  portal: { enabled: true }\n');
    const bad = await nlsRun(['build', '--config', 'bad.yaml', '--out', 'bad-out'], {}, repo);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('  values.operator.replica: unknown key; did you mean replicas?');
    expect(bad.stderr).toContain('  values.portal.hostname: portal.enabled needs a host name');
    expect(fs.existsSync(path.join(repo, 'bad-out'))).toBe(false);
    expect((await nlsRun(['build', '--help'])).stdout).toContain('nls build --config FILE [--out DIR] [--preview]');
  });

  it('the package publishes CustomBuildConfig as nebari-llm-serving/build, so tsc checks a TypeScript build file', () => {
    expect(nls).not.toBe('');
    // As `npm i -D nebari-llm-serving` leaves it: the installed package under the project's node_modules.
    const project = fs.mkdtempSync(path.join(tmp, 'typed-'));
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.symlinkSync(path.resolve(nls, '..', '..', 'lib', 'node_modules', pkg.name), path.join(project, 'node_modules', pkg.name));
    const builds = { good: "{ operator: { replicas: 2 } }", misspelt: '{ operator: { replica: 2 } }' };
    const files = Object.entries(builds).map(([name, v]) => {
      const file = path.join(project, `${name}.ts`);
      fs.writeFileSync(file, `import type { CustomBuildConfig } from '${pkg.name}/build';\nexport default { values: ${v} } satisfies CustomBuildConfig;\n`);
      return file;
    });
    const program = ts.createProgram(files, { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: [] });
    const errors = (name: string) =>
      ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file?.fileName.endsWith(`/${name}.ts`))
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
        .join('\n');
    expect(errors('good')).toBe('');
    expect(errors('misspelt')).toContain("'replica' does not exist");
  });
});

