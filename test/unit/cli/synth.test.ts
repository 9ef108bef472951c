// `npm run synth -- --config …` as a newcomer runs it (issue 30, items 8, 9 and 11): the real
// command, started from a directory other than the checkout, with build files in YAML and in
// every module flavour. CDK8S_OUTDIR keeps the checkout's own generated files out of it.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import * as ts from 'typescript';
import { version } from '../../../src/version';

const root = path.resolve(__dirname, '../../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-synth-cli-'));
const generated = path.join(dir, 'generated');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// Without npm's variables, whatever started Jest: the command alone decides where paths resolve from.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && k !== 'INIT_CWD'));

/** `node scripts/ts-run.js src/cli/synth.ts ARGS` run in `cwd`. */
function synth(cwd: string, ...args: string[]) {
  const run = spawnSync(process.execPath, [path.join(root, 'scripts/ts-run.js'), path.join(root, 'src/cli/synth.ts'), '--no-package', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...env, CDK8S_OUTDIR: generated },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

function write(file: string, text: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

const platform = 'platform: { baseDomain: example.com, jwt: { issuer: "https://keycloak.example.com/realms/nebari", audiences: [nebari-llm] } }';
const goodBuild = `values:\n  ${platform}\nmodels:\n  - apiVersion: llm.nebari.dev/v1beta1\n    kind: PassthroughModel\n    metadata: { name: openai }\n    spec: { provider: { hostname: api.openai.com, credential: { secretRef: { name: k } } }, models: { declared: [gpt-4o] }, access: { groups: [ml-team] } }\n`;

describe('issue 30, item 8: paths, arguments and build modules', () => {
  const repo = path.join(dir, 'gitops'); // a GitOps repository, outside the checkout
  beforeAll(() => write(path.join(repo, 'clusters/prod/build.yaml'), goodBuild));

  test('npm run synth from another directory resolves --config and --out from that directory', () => {
    const run = spawnSync('npm', ['--prefix', root, 'run', 'synth', '--', '--no-package', '--config', 'clusters/prod/build.yaml', '--out', 'clusters/prod/out'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...env, CDK8S_OUTDIR: generated },
    });
    expect(run.stderr).not.toContain('does not exist');
    expect(run.status).toBe(0);
    expect(parse(fs.readFileSync(path.join(repo, 'clusters/prod/out/values.yaml'), 'utf8'))).toMatchObject({ platform: { baseDomain: 'example.com' } });
    expect(run.stdout).toContain('synth: custom build wrote clusters/prod/out/models.yaml');
  }, 60_000);

  test('a missing build file names the path it looked at and the directory relative paths are resolved from', () => {
    fs.rmSync(generated, { recursive: true, force: true });
    const run = synth(repo, '--config', 'clusters/prod/nope.yaml');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--config: ${path.join(repo, 'clusters/prod/nope.yaml')} does not exist (relative paths are resolved from the directory the command was run in, ${repo})`);
    expect(fs.existsSync(generated)).toBe(false); // stopped before writing anything
  });

  test('--config=FILE and --out=DIR work; --help prints the usage and does nothing else', () => {
    const run = synth(repo, '--config=clusters/prod/build.yaml', '--out=eq-out');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(fs.existsSync(path.join(repo, 'eq-out/models.yaml'))).toBe(true);
    fs.rmSync(generated, { recursive: true, force: true });
    const help = synth(repo, '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('npm run synth -- --config FILE [--out DIR]');
    expect(fs.existsSync(generated)).toBe(false);
  });

  test('--out naming an existing file is refused before anything is written', () => {
    const file = write(path.join(repo, 'not-a-dir'), 'x\n');
    fs.rmSync(generated, { recursive: true, force: true });
    const run = synth(repo, '--config', 'clusters/prod/build.yaml', '--out', 'not-a-dir');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--out: ${file} is a file; --out names the directory`);
    expect(fs.readFileSync(file, 'utf8')).toBe('x\n');
    expect(fs.existsSync(generated)).toBe(false);
  });

  test('a TypeScript syntax error names the file, line and column', () => {
    const file = write(path.join(repo, 'broken.ts'), "const build = {\n  values: { operator: { replicas: 2 } \n};\nexport default build;\n");
    const run = synth(repo, '--config', 'broken.ts', '--out', 'o');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`synth: --config: ${file}:3:2: syntax error: ',' expected.`);
  });

  test('named exports without a default export are named', () => {
    const file = write(path.join(repo, 'named.ts'), "export const build = { values: {} };\nexport const models = [];\n");
    const run = synth(repo, '--config', 'named.ts', '--out', 'o');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--config: ${file}: "export default" expected, found named exports build, models`);
  });

  test.each([
    ['build.mjs', "export default { release: { name: 'from-mjs' } };\n"],
    ['build.mts', "const build: { release: { name: string } } = { release: { name: 'from-mts' } };\nexport default build;\n"],
    // Outside the checkout, yet importing a package only the checkout has installed.
    ['build.ts', "import { parse } from 'yaml';\nimport type { CustomBuildConfig } from 'nebari-llm-serving/build';\nexport default { release: { name: 'from-ts' }, values: parse('operator: { replicas: 2 }') } satisfies CustomBuildConfig;\n"],
  ])('a %s build module is loaded as a module', (name, text) => {
    write(path.join(repo, 'modules', name), text);
    const run = synth(path.join(repo, 'modules'), '--config', name, '--out', `out-${name}`);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const release = /from-\w+/.exec(text)![0];
    expect(fs.readFileSync(path.join(repo, 'modules', `out-${name}`, 'manifests.yaml'), 'utf8')).toContain(`name: ${release}-nebari-llm-serving-operator`);
  });

  test('the config type is exported: a TypeScript build with a misspelt value key or a wrong enum value fails the type check', () => {
    const builds: Record<string, string> = { good: "{ operator: { replicas: 2, logLevel: 'debug' } }", misspelt: '{ operator: { replica: 2 } }', enum: "{ operator: { logLevel: 'verbose' } }" };
    const typeCheck = path.join(root, 'dist', `type-check-${process.pid}`); // inside the checkout, as a build there imports src/build
    const files = Object.entries(builds).map(([name, values]) =>
      write(path.join(typeCheck, `${name}.ts`), `import type { CustomBuildConfig } from '../../src/build';\nexport default { values: ${values} } satisfies CustomBuildConfig;\n`),
    );
    const program = ts.createProgram(files, { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, types: [] });
    const errors = (name: string) =>
      ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file?.fileName.endsWith(`/${name}.ts`))
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
        .join('\n');
    fs.rmSync(typeCheck, { recursive: true, force: true });
    expect(errors('good')).toBe('');
    expect(errors('misspelt')).toContain("'replica' does not exist");
    expect(errors('enum')).toContain('"verbose"');
  }, 60_000);
});

describe('issue 30, item 9: messages', () => {
  const build = write(
    path.join(dir, 'messages', 'build.yaml'),
    [
      'valuez: {}',
      'values:',
      '  operator: { replica: 2, logLevel: verbose }',
      '  platform: { baseDomain: example.com }',
      '  portal: { enabled: true, oidc: { clientId: keys }, networkPolicy: { fromm: [] } }',
      '  webhook: { timeoutSeconds: 100 }',
      '  fullnameOverride: Team_LLM',
      'models:',
      '  - apiVersion: llm.nebari.dev/v1beta1',
      '    kind: PassthroughModel',
      '    metadata: { name: openai }',
      '    spec: { provider: { hostname: api.openai.com, credential: { secretRef: { name: k } } }, models: { declared: [gpt-4o] }, access: { groups: [ml-team] }, extra: 1 }',
      '',
    ].join('\n'),
  );

  test('every problem in one run, each keyed, with "did you mean", the allowed values and what a pattern means', () => {
    const run = synth(path.dirname(build), '--config', 'build.yaml', '--out', 'out');
    expect(run.status).toBe(2);
    const lines = run.stderr.split('\n').filter((l) => l.startsWith('  '));
    expect(lines).toEqual(
      expect.arrayContaining([
        '  valuez: unknown key; did you mean values? (known keys here: release, values, models)',
        expect.stringMatching(/^ {2}values\.operator\.replica: unknown key; did you mean replicas\? /),
        '  values.operator.logLevel: "verbose" is not allowed; use one of debug, info, warn, error',
        expect.stringMatching(/^ {2}values\.portal\.networkPolicy\.fromm: unknown key; did you mean from\?/),
        '  values.webhook.timeoutSeconds: 100 is too large: at most 30',
        expect.stringMatching(/^ {2}values\.fullnameOverride: "Team_LLM" is not valid: expected empty, or a DNS label: lower-case letters/),
        '  models[0].spec.extra: unknown field; remove it (the API server would drop it)',
      ]),
    );
    // No regular expression in any message.
    expect(run.stderr).not.toMatch(/\^|\[a-z|\$'/);
    expect(run.stderr).toContain('(7 problems)');
  });

  test('a chart-level failure exits 2 and names the config key, not a --set flag', () => {
    const file = write(path.join(dir, 'messages', 'portal.yaml'), 'values:\n  portal: { enabled: true, oidc: { clientId: keys } }\n');
    const run = synth(path.dirname(file), '--config', 'portal.yaml', '--out', 'out');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('  values.portal.hostname: portal.enabled needs a host name: set portal.hostname (e.g. values.portal.hostname: llm-keys.example.com)');
    expect(run.stderr).toContain('  values.platform.jwt.issuer: portal.enabled needs the OIDC issuer');
    expect(run.stderr).not.toContain('--set');
  });

  test('the admission warnings nls validate prints are printed by the build too', () => {
    const file = write(
      path.join(dir, 'messages', 'warned.yaml'),
      `values:\n  ${platform}\nmodels:\n  - apiVersion: llm.nebari.dev/v1alpha1\n    kind: PassthroughModel\n    metadata: { name: openai }\n    spec: { provider: { hostname: API.OpenAI.com., credentialSecretName: k }, models: { declared: [gpt-4o] }, access: { groups: [ml-team] } }\n`,
    );
    const run = synth(path.dirname(file), '--config', 'warned.yaml', '--out', 'out');
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('synth: warning: models[0] (PassthroughModel openai): llm.nebari.dev/v1alpha1 PassthroughModel is deprecated; use llm.nebari.dev/v1beta1');
    expect(run.stderr).toContain('synth: warning: models[0] (PassthroughModel openai): spec.provider.hostname: "API.OpenAI.com." is used as "api.openai.com"');
  });
});

describe('issue 30, item 11: provenance', () => {
  test('every file of a build records its build file, generator version and commit, and chart version; regenerating writes the same bytes', () => {
    const repo = path.join(dir, 'provenance');
    const file = write(path.join(repo, 'build.yaml'), goodBuild);
    const out = path.join(repo, 'out');
    expect(synth(repo, '--config', 'build.yaml', '--out', 'out', '--preview').status).toBe(0);
    const commit = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const sha = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    const names = ['values.yaml', 'models.yaml', 'manifests.yaml', 'preview/derived-objects.yaml'];
    const first = names.map((n) => fs.readFileSync(path.join(out, n), 'utf8'));
    for (const text of first) {
      const header = text.split('\n').slice(0, 4).join('\n');
      expect(header).toContain(`# Build file: ../build.yaml (sha256 ${sha})`);
      expect(header).toMatch(new RegExp(`^# Generator: nebari-llm-serving ${version}, commit ${commit}`, 'm'));
      expect(header).toContain(`# Chart version: ${version} (install the nebari-llm-serving chart of this version with these files)`);
    }
    expect(synth(repo, '--config', 'build.yaml', '--out', 'out', '--preview').status).toBe(0);
    expect(names.map((n) => fs.readFileSync(path.join(out, n), 'utf8'))).toEqual(first);
  });
});
