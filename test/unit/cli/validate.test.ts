// `nls validate`: reading files and directories, the verdicts and the exit codes; and one run of
// the real command.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatVerdicts, inputFiles, readObjects, runValidate, validateObjects } from '../../../src/cli/builds/validate';

const root = path.resolve(__dirname, '../../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-validate-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const good = `apiVersion: llm.nebari.dev/v1alpha1
kind: LLMModel
metadata: { name: qwen }
spec:
  model: { name: Qwen/Qwen3-8B, source: huggingface }
  resources: { gpu: { count: 1 } }
  access: { public: true }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: ignored }
---
apiVersion: llm.nebari.dev/v1alpha1
kind: AgentDeployment
metadata: { name: bot }
spec:
  image: registry.example.com/bot:1
  model: { modelRef: { kind: LLMModel, name: qwen } }
`;
const bad = `apiVersion: llm.nebari.dev/v1alpha1
kind: PassthroughModel
metadata: { name: openai }
spec:
  provider: { hostname: "https://api.openai.com", credentialSecretName: k }
  models: { declared: [gpt-4.1, gpt-4.1] }
  access: { public: true }
`;

function lines(args: string[]): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  return runValidate(args, (l) => out.push(l)).then((code) => ({ code, out }));
}

beforeAll(() => {
  fs.mkdirSync(path.join(dir, 'repo/apps'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'repo/.git'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'repo/apps/good.yaml'), good);
  fs.writeFileSync(path.join(dir, 'repo/.git/skip.yaml'), bad);
  fs.writeFileSync(path.join(dir, 'repo/README.md'), '# not a manifest');
  fs.writeFileSync(path.join(dir, 'bad.yaml'), bad);
});

test('directories are read recursively for manifest files, hidden entries skipped', () => {
  expect(inputFiles([path.join(dir, 'repo')])).toEqual([path.join(dir, 'repo/apps/good.yaml')]);
  expect(() => inputFiles([path.join(dir, 'nope')])).toThrow(/does not exist/);
});

test('documents and List items are read; broken YAML is a usage error naming the file', () => {
  expect(readObjects('f', good).map((o) => o.object.kind)).toEqual(['LLMModel', 'ConfigMap', 'AgentDeployment']);
  expect(readObjects('f', 'kind: List\nitems: [{kind: A}, {kind: B}]\n').map((o) => o.object.kind)).toEqual(['A', 'B']);
  expect(() => readObjects('f.yaml', 'a: [\n')).toThrow(/f\.yaml document 1 is not valid YAML/);
});

test('the objects of the input are the cluster state, and duplicates are refused', async () => {
  const objects = readObjects('good.yaml', good);
  const verdicts = await validateObjects(objects, 'models', []);
  expect(verdicts.map((v) => [v.kind, v.namespace, v.admitted])).toEqual([
    ['LLMModel', 'models', true],
    ['AgentDeployment', 'models', true],
  ]);
  const alone = await validateObjects(objects.filter((o) => o.object.kind === 'AgentDeployment'), 'models', []);
  expect(alone[0].problems[0].message).toContain('spec.model.modelRef.name: LLMModel "qwen" does not exist');
  const twice = await validateObjects([...objects, ...readObjects('copy.yaml', good)], 'models', []);
  expect(formatVerdicts(twice).join('\n')).toContain('LLMModel models/qwen is also declared in good.yaml (document 1); keep one');
});

test('one line per problem with file, object and field; exit 1 when any object is rejected, 0 when all are admitted', async () => {
  const rejected = await lines([path.join(dir, 'bad.yaml'), '--namespace', 'models']);
  expect(rejected.code).toBe(1);
  expect(rejected.out[0]).toBe(
    `${path.join(dir, 'bad.yaml')}: PassthroughModel models/openai: spec.provider.hostname: Invalid value: "string": spec.provider.hostname: "https://api.openai.com" is a URL; set only the host name (for example api.openai.com) and put a path prefix in spec.provider.schemaVersion`,
  );
  expect(rejected.out.at(-1)).toBe('1 object(s) checked: 0 admitted, 1 rejected');
  const admitted = await lines([path.join(dir, 'repo'), '--output', 'json']);
  expect(admitted.code).toBe(0);
  expect(JSON.parse(admitted.out.join('\n'))).toMatchObject({ files: 1, objects: [{ kind: 'LLMModel', namespace: 'nebari-llm-serving-system', admitted: true }, { kind: 'AgentDeployment', admitted: true }] });
});

test('usage errors exit 2', async () => {
  expect((await lines([])).code).toBe(2);
  expect((await lines(['--output', 'xml', path.join(dir, 'bad.yaml')])).code).toBe(2);
  expect((await lines([path.join(dir, 'missing.yaml')])).out[0]).toBe(`error: validate: ${path.join(dir, 'missing.yaml')} does not exist`);
});

test('the nls command runs it', () => {
  const tsNode = path.join(root, 'node_modules/.bin/ts-node');
  const run = spawnSync(tsNode, ['--transpile-only', 'src/cli/main.ts', 'validate', '--namespace', 'models', path.join(dir, 'bad.yaml'), path.join(dir, 'repo')], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(run.status).toBe(1);
  // The CRD's rule refuses the hostname, so the webhook (and its duplicate-id check) is never called.
  expect(run.stdout).toContain('PassthroughModel models/openai: spec.provider.hostname: Invalid value');
  expect(run.stdout).not.toContain('already listed');
  expect(run.stdout).toContain('3 object(s) checked: 2 admitted, 1 rejected');
  expect(execFileSync(tsNode, ['--transpile-only', 'src/cli/main.ts', 'validate', '--help'], { cwd: root, encoding: 'utf8' })).toContain('Usage:\n  nls validate');
}, 60_000);

test('a model its provider refuses (BuildFailed in the cluster) is rejected with the same message, exit 1', async () => {
  const file = path.join(dir, 'kaito-two.yaml');
  fs.writeFileSync(
    file,
    `apiVersion: llm.nebari.dev/v1beta1
kind: LLMModel
metadata: { name: phi-4-kaito }
spec:
  model: { name: microsoft/phi-4, source: huggingface }
  provider: { name: kaito }
  resources: { gpu: { count: 1 } }
  serving: { replicas: 2 }
  access: { public: true }
`,
  );
  const result = await lines([file, '--namespace', 'models']);
  expect(result.code).toBe(1);
  expect(result.out[0]).toBe(
    `${file}: LLMModel models/phi-4-kaito: spec.serving.replicas: 2 is not supported by the KAITO provider: a KAITO Workspace runs exactly one serving instance; set 1 (delete the LLMModel to stop serving) or use provider vllm for more replicas`,
  );
});

test('a typo in the API group is a rejection with the group to use, not a silent "0 objects"', async () => {
  const file = path.join(dir, 'typo.yaml');
  fs.writeFileSync(file, good.replace('apiVersion: llm.nebari.dev/v1alpha1\nkind: LLMModel', 'apiVersion: llm.nebar.dev/v1beta1\nkind: LLMModel'));
  const result = await lines([file]);
  expect(result.code).toBe(1);
  expect(result.out[0]).toBe(
    `${file}: LLMModel nebari-llm-serving-system/qwen: apiVersion: "llm.nebar.dev/v1beta1" is not an API version of llm.nebari.dev, so nothing would admit this LLMModel as one; did you mean llm.nebari.dev/v1beta1?`,
  );
  // A file of other kinds only is not ours to judge; it is said that nothing was checked.
  const other = path.join(dir, 'other.yaml');
  fs.writeFileSync(other, 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: c }\n');
  const none = await lines([other]);
  expect(none.code).toBe(0);
  expect(none.out).toEqual(['warning: no llm.nebari.dev object in the input; check the paths and each object\'s apiVersion', '0 object(s) checked: 0 admitted, 0 rejected']);
});

test('nls validate examples/ admits every committed example (the v1alpha1 forms, same names, live in docs/v1alpha1-examples/)', async () => {
  const result = await lines([path.join(root, 'examples')]);
  expect(result.out.filter((l) => !l.includes(': warning: '))).toEqual([expect.stringMatching(/^(\d+) object\(s\) checked: \1 admitted, 0 rejected$/)]);
  expect(result.code).toBe(0);
  expect((await lines([path.join(root, 'docs', 'v1alpha1-examples')])).code).toBe(0);
});

test('a CRD rule Kubernetes 1.32 would refuse for its cost is a line of its own and exit 1', async () => {
  const line =
    'CustomResourceDefinition llmmodels.llm.nebari.dev: spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: estimated rule cost 55364928 (3460308 × cardinality 16) exceeds the Kubernetes 1.32 budget of 10000000 by factor of 5.5x; Kubernetes 1.32 refuses the CRD (add maxLength, maxItems or maxProperties, simplify the rule, or move the check to the webhook)';
  let run: typeof runValidate = runValidate;
  jest.isolateModules(() => {
    jest.doMock('../../../src/admission', () => ({ ...jest.requireActual('../../../src/admission'), crdCostProblems: () => [line] }));
    run = (jest.requireActual('../../../src/cli/builds/validate') as typeof import('../../../src/cli/builds/validate')).runValidate;
  });
  const out: string[] = [];
  expect(await run([path.join(dir, 'repo')], (l) => out.push(l))).toBe(1);
  expect(out[0]).toBe(line);
  expect(out.filter((l) => l.includes('Kubernetes 1.32'))).toEqual([line]);
  expect(out.at(-1)).toBe('2 object(s) checked: 2 admitted, 0 rejected');
  const json: string[] = [];
  expect(await run([path.join(dir, 'repo'), '--output', 'json'], (l) => json.push(l))).toBe(1);
  expect(JSON.parse(json.join('\n'))).toMatchObject({ crdProblems: [line] });
  jest.dontMock('../../../src/admission');
});

test('--allowed-images refuses images the installation would refuse (webhook.allowedImages)', async () => {
  const file = path.join(dir, 'repo/apps/good.yaml');
  expect(await lines([file, '--allowed-images', 'registry.example.com/'])).toMatchObject({ code: 0 });
  const refused = await lines([file, '--allowed-images', 'registry.internal/,vllm/vllm-openai:']);
  expect(refused.code).toBe(1);
  expect(refused.out.join('\n')).toContain(
    'AgentDeployment nebari-llm-serving-system/bot: spec.image: image "registry.example.com/bot:1" is not allowed by this installation (allowed: "registry.internal/", "vllm/vllm-openai:")',
  );
  expect(await lines([file, '--allowed-images', 'a b/'])).toMatchObject({ code: 2, out: [expect.stringContaining('--allowed-images: "a b/" is not an image prefix')] });
});
