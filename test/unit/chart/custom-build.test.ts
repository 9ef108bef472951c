import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse, parseAllDocuments } from 'yaml';
import { type CustomBuild, CustomBuildConfigError, customBuildFiles, GITOPS_ANNOTATIONS, PREVIEW_FILE, resolveCustomBuild } from '../../../src/chart/custom-build';
import { desiredGatewayObjects } from '../../../src/translate/gateway';
import { loadConfig, parseArgs } from '../../../src/cli/synth';

const anthropic = {
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'PassthroughModel',
  metadata: { name: 'anthropic' },
  spec: {
    provider: { backend: { type: 'Anthropic' }, credential: { secretRef: { name: 'anthropic-key' } } },
    models: { declared: ['claude-sonnet-4-5'] },
    access: { groups: ['llm-users'] },
  },
};
const platform = { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] } };

async function problems(config: unknown): Promise<string[]> {
  try {
    await resolveCustomBuild(config);
  } catch (err) {
    if (err instanceof CustomBuildConfigError) return err.message.split('\n');
    throw err;
  }
  return [];
}

describe('custom build config', () => {
  test('values override the defaults and models land in the release namespace with defaults applied', async () => {
    const build = await resolveCustomBuild({ release: { name: 'team', namespace: 'llm' }, values: { platform, operator: { replicas: 2 } }, models: [anthropic] });
    expect(build.values.operator.replicas).toBe(2);
    expect(build.values.operator.logLevel).toBe('info');
    expect(build.models[0].metadata.namespace).toBe('llm');
    // The webhook adds the operator's cleanup finalizer on CREATE: the operator's field, not the GitOps file's.
    expect(build.models[0].metadata).not.toHaveProperty('finalizers');
    const other = await resolveCustomBuild({ values: { platform }, models: [{ ...anthropic, metadata: { ...anthropic.metadata, finalizers: ['example.com/keep'] } }] });
    expect(other.models[0].metadata).toMatchObject({ finalizers: ['example.com/keep'] });
  });

  const bad: Array<[string, unknown, string]> = [
    ['unknown top-level key', { valuez: {} }, 'valuez: unknown key; did you mean values? (known keys here: release, values, models)'],
    ['misspelt chart value', { values: { operator: { replica: 2 } } }, 'values.operator.replica: unknown key; did you mean replicas?'],
    ['chart value of the wrong type', { values: { webhook: { timeoutSeconds: 'ten' } } }, 'values.webhook.timeoutSeconds: "ten": expected integer'],
    ['release name that is not a DNS label', { release: { name: 'Team_LLM' } }, 'release.name: "Team_LLM" is not valid: expected a DNS label: lower-case letters'],
    ['a kind that cannot be static', { values: { platform }, models: [{ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'AgentDeployment', metadata: { name: 'a' } }] }, 'models[0].kind: "AgentDeployment" is not a static model kind'],
    ['a field the CRD does not have', { values: { platform }, models: [{ ...anthropic, spec: { ...anthropic.spec, extra: 1 } }] }, 'models[0].spec.extra: unknown field'],
    ['a field of the wrong type', { values: { platform }, models: [{ ...anthropic, spec: { ...anthropic.spec, access: { groups: 'llm-users' } } }] }, 'models[0].spec.access.groups: Invalid value: "string": spec.access.groups in body must be of type array'],
    ['a model in another namespace', { values: { platform }, models: [{ ...anthropic, metadata: { name: 'a', namespace: 'elsewhere' } }] }, 'models[0].metadata.namespace: "elsewhere" differs from the release namespace'],
    ['models without a base domain', { models: [anthropic] }, 'values.platform.baseDomain: required when models are declared'],
    ['the same model twice', { values: { platform }, models: [anthropic, anthropic] }, 'models[1].metadata.name: PassthroughModel/anthropic is declared twice'],
  ];
  test.each(bad)('%s is refused naming the key', async (_name, config, message) => {
    expect((await problems(config)).join('\n')).toContain(message);
  });

  test('a v1alpha1 model (still served) is admitted in its own version and translated as v1beta1; its problems name its fields', async () => {
    const example = parse(fs.readFileSync(path.join(__dirname, '../../../docs/v1alpha1-examples/passthroughmodel/openrouter.yaml'), 'utf8')) as Record<string, unknown>;
    const build = await resolveCustomBuild({ values: { platform }, models: [example] });
    expect(build.models[0]).toMatchObject({ apiVersion: 'llm.nebari.dev/v1alpha1', spec: { provider: { schemaVersion: 'api/v1', credentialSecretName: 'openrouter-key' } } });
    const preview = customBuildFiles(build, { preview: true })[PREVIEW_FILE];
    expect(preview).toContain('prefix: /api/v1');
    const spec = example.spec as { provider: Record<string, unknown> };
    const broken = { ...example, spec: { ...spec, provider: { ...spec.provider, hostname: 'openrouter.ai/api' } } };
    expect((await problems({ values: { platform }, models: [broken] })).join('\n')).toContain('put the path prefix in spec.provider.schemaVersion');
  });

  test('an example pasted under models passes: defaults come before the schema (gpu.type)', async () => {
    const example = parse(fs.readFileSync(path.join(__dirname, '../../../examples/llmmodel/vllm-huggingface.yaml'), 'utf8')) as Record<string, unknown>;
    const build = await resolveCustomBuild({ values: { platform }, models: [example] });
    expect(build.models[0]).toMatchObject({ spec: { resources: { gpu: { type: 'nvidia' } } } });
  });

  const llm = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name },
    spec: { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' }, resources: { gpu: { count: 1 } }, access: { public: true }, ...spec },
  });
  // What the cluster refuses (CEL rules and webhook checks), synth refuses too.
  const refusedLikeTheCluster: Array<[string, Record<string, unknown>, string]> = [
    ['duplicate declared ids', { ...anthropic, spec: { ...anthropic.spec, models: { declared: ['a', 'a'] } } }, 'models[0].spec.models.declared[1]: "a" is already listed'],
    ['an OCI source without an image', llm('oci', { model: { name: 'm', source: 'oci' } }), 'models[0].spec.model: Invalid value: "object": spec.model.image is required'],
    ['forbidden override keys', llm('ovr', { provider: { name: 'kaito', overrides: { metadata: { name: 'x' } } } }), 'models[0].spec.provider.overrides: Invalid value'],
    ['an upper-case subdomain', llm('up', { endpoints: { external: { subdomain: 'Big' } } }), 'models[0].spec.endpoints.external.subdomain'],
    ['an over-long name without a subdomain', llm(`l${'x'.repeat(63)}`, {}), 'metadata.name is longer than 63 characters'],
    ['a name with a dot', llm('llama-3.1-8b', {}), 'for example to "llama-3-1-8b"'],
    ['an id that is only whitespace', { ...anthropic, spec: { ...anthropic.spec, models: { declared: ['  '] } } }, 'models[0].spec.models.declared[0]'],
    ['a negative storage size', llm('neg', { model: { name: 'm', source: 'huggingface', storage: { size: '-5Gi' } } }), 'models[0].spec.model.storage.size'],
    ['a provider block that does not fit the backend', { ...anthropic, spec: { ...anthropic.spec, provider: { ...anthropic.spec.provider, backend: { type: 'Anthropic', bedrock: { region: 'us-east-1' } } } } }, 'spec.provider.backend.bedrock is only valid'],
    ['an LLMModel and a PassthroughModel sharing a name', llm('anthropic', {}), 'models[0].metadata.name: a PassthroughModel named "anthropic" already exists'],
    // Admitted by the API server, then refused by the provider's translation (BuildFailed).
    ['a KAITO model with two replicas', llm('kaito-two', { provider: { name: 'kaito' }, serving: { replicas: 2 } }), 'models[0].spec.serving.replicas: 2 is not supported by the KAITO provider'],
    ['a KubeRay model without GPUs', llm('ray-cpu', { provider: { name: 'kuberay' }, resources: { gpu: { count: 0 } } }), 'models[0].spec.resources.gpu.count: is 0, but the kuberay provider'],
  ];
  test.each(refusedLikeTheCluster)('%s is refused as the cluster refuses it', async (_name, model, message) => {
    expect((await problems({ values: { platform }, models: [model, anthropic] })).join('\n')).toContain(message);
  });

  test('platform host names with upper case or a trailing root dot are accepted and reach the models normalised', async () => {
    const build = await resolveCustomBuild({ values: { platform: { ...platform, baseDomain: 'Example.COM.', internal: { hostname: 'LLM-Internal.Example.com.' } } }, models: [anthropic] });
    const preview = parseAllDocuments(customBuildFiles(build, { preview: true })[PREVIEW_FILE]).map((d) => d.toJS());
    const hosts = preview.filter((o) => o.kind === 'AIGatewayRoute').map((o) => o.spec.hostnames ?? o.spec.parentRefs);
    expect(JSON.stringify(hosts)).toContain('llm.example.com');
    expect(JSON.stringify(hosts)).toContain('llm-internal.example.com');
    expect(JSON.stringify(preview)).not.toMatch(/Example|example\.com\./);
  });

  test('with quotas on, the preview shows the external route with its token cost (no quota policy: keys exist only in the cluster)', async () => {
    const quotas = { rateLimitBackend: 'redis://redis:6379', costType: 'OutputToken', defaultTier: 'standard', tiers: [{ name: 'standard', tokens: 1000, unit: 'Hour' }] };
    type Obj = { kind: string; metadata: { name: string }; spec: Record<string, unknown> };
    const preview = async (values: Record<string, unknown>) =>
      parseAllDocuments(customBuildFiles(await resolveCustomBuild({ values, models: [anthropic] }), { preview: true })[PREVIEW_FILE]).map((d) => d.toJS() as Obj);
    const external = (objects: Obj[]) => objects.find((o) => o.kind === 'AIGatewayRoute' && o.metadata.name.endsWith('-external'))!;
    const on = await preview({ platform, quotas });
    expect(external(on).spec.llmRequestCosts).toEqual([{ metadataKey: 'llm_quota_tokens', type: 'OutputToken' }]);
    expect(on.some((o) => o.kind === 'BackendTrafficPolicy')).toBe(false);
    expect(external(await preview({ platform })).spec).not.toHaveProperty('llmRequestCosts');
  });

  test('a value that is no host name is refused naming the key', async () => {
    expect((await problems({ values: { platform: { baseDomain: 'example_com' } } })).join('\n')).toContain('values.platform.baseDomain');
    expect((await problems({ values: { platform: { external: { hostname: 'llm.example.com..' } } } })).join('\n')).toContain('values.platform.external.hostname');
  });

  test('a model the translation refuses is reported with its index, kind and field', async () => {
    expect((await problems({ values: { platform: { baseDomain: 'example.com' } }, models: [anthropic] })).join('\n')).toMatch(
      /models\[0\] \(PassthroughModel nebari-llm-serving-system\/anthropic\): spec\.endpoints\.internal\.enabled: .*set the chart value platform\.jwt\.issuer/,
    );
  });

  test('an issuer without audiences fails the build, naming values.platform.jwt.audiences and the opt-out (issue 29, Medium 9)', async () => {
    const issuerOnly = { baseDomain: 'example.com', jwt: { issuer: platform.jwt.issuer } };
    expect(await problems({ values: { platform: issuerOnly }, models: [anthropic] })).toEqual([
      expect.stringMatching(/^values\.platform\.jwt\.audiences: platform\.jwt\.issuer is set but platform\.jwt\.audiences is empty: .*values\.platform\.jwt\.audiences: \[nebari-llm\].*platform\.jwt\.allowAnyAudience=true/),
    ]);
    const accepted = await resolveCustomBuild({ values: { platform: { ...issuerOnly, jwt: { ...issuerOnly.jwt, allowAnyAudience: true } } }, models: [anthropic] });
    expect(Object.keys(customBuildFiles(accepted)).length).toBeGreaterThan(0);
  });
});

describe('custom build output', () => {
  let build: CustomBuild;
  let files: Record<string, string>;
  beforeAll(async () => {
    build = await resolveCustomBuild({ release: { name: 'team', namespace: 'llm' }, values: { platform }, models: [anthropic] });
    files = customBuildFiles(build);
  });
  const docs = (text: string) => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
  const context = { ...platform, clientIDHeader: 'x-llm-client-id', external: { gatewayName: 'nebari-gateway', gatewayNamespace: 'envoy-gateway-system', sectionName: 'llm-https' }, internal: { gatewayName: 'nebari-internal-gateway', gatewayNamespace: 'envoy-gateway-system', sectionName: 'llm-internal-https' }, jwt: { ...platform.jwt, groupsClaim: 'groups' }, llmModelRequestTimeout: '600s', modelsOwnedBy: 'nebari-llm-serving', passthroughRequestTimeout: '120s' };

  test('models.yaml holds only the model objects, defaulted as the API server stores them, with the Argo CD ordering annotations', () => {
    const objects = docs(files['models.yaml']);
    expect(objects.map((o) => o.kind)).toEqual(['PassthroughModel']);
    expect(objects[0]).toMatchObject({ metadata: { name: 'anthropic', namespace: 'llm', annotations: GITOPS_ANNOTATIONS } });
    // The mutating webhook's defaults (credential type, Anthropic's host) on top of the schema's.
    expect(objects[0].spec.provider).toMatchObject({ credential: { type: 'APIKey' }, hostname: 'api.anthropic.com', port: 443 });
    expect(objects[0].status).toBeUndefined();
    expect(files['models.yaml']).toContain('commit and apply these (after the chart');
  });

  test('an LLMModel gets the tensor parallelism the webhook would default, and a model keeps its own annotations', async () => {
    const llm = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: 'qwen', annotations: { 'argocd.argoproj.io/sync-wave': '5', team: 'a' } }, spec: { model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface' }, resources: { gpu: { count: 4, type: 'nvidia' } }, access: { public: true } } };
    const [stored] = docs(customBuildFiles(await resolveCustomBuild({ values: { platform }, models: [llm] }))['models.yaml']);
    expect(stored.spec.serving).toMatchObject({ tensorParallelism: 4 });
    expect(stored.metadata.annotations).toEqual({ ...GITOPS_ANNOTATIONS, 'argocd.argoproj.io/sync-wave': '5', team: 'a' });
  });

  test('the derived objects are written only with the preview option, to preview/, marked not to apply, and equal the translation', () => {
    expect(Object.keys(files).sort()).toEqual(['manifests.yaml', 'models.yaml', 'values.yaml']);
    const withPreview = customBuildFiles(build, { preview: true });
    expect(PREVIEW_FILE).toBe('preview/derived-objects.yaml');
    expect(withPreview[PREVIEW_FILE]).toContain('PREVIEW ONLY - DO NOT APPLY');
    const stored = docs(withPreview['models.yaml'])[0];
    const expected = desiredGatewayObjects(stored, context);
    expect(expected.errors).toEqual([]);
    expect(docs(withPreview[PREVIEW_FILE])).toEqual(JSON.parse(JSON.stringify(expected.objects)));
    expect(docs(withPreview[PREVIEW_FILE]).some((o) => o.kind === 'PassthroughModel')).toBe(false);
  });

  test('values.yaml holds only what the build sets, so the published chart keeps its own defaults and its signed image pin', () => {
    expect(parse(files['values.yaml'])).toEqual({ platform });
    // Not the checkout's defaults: no operator.image (whose empty digest would unpin the release's image).
    expect(files['values.yaml']).not.toContain('image:');
    expect(parse(customBuildFiles({ ...build, overrides: {} })['values.yaml'])).toEqual({});
  });

  test('manifests.yaml is the whole installation for the release, CRDs first', () => {
    const objects = docs(files['manifests.yaml']);
    expect(objects.slice(0, 3).map((o) => o.kind)).toEqual(['CustomResourceDefinition', 'CustomResourceDefinition', 'CustomResourceDefinition']);
    expect(objects.find((o) => o.kind === 'Deployment')).toMatchObject({ metadata: { name: 'team-nebari-llm-serving-operator', namespace: 'llm' } });
    // Applied with kubectl (no --create-namespace), it creates its own Namespace, as deploy/controller.yaml does.
    expect(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name)).toEqual(['llm']);
    expect(parse(files['values.yaml'])).not.toHaveProperty('namespace');
    expect(files['values.yaml']).toContain('baseDomain: example.com');
  });
});

describe('synth arguments', () => {
  test('parses --config, --out, --preview and --no-package and refuses anything else', () => {
    expect(parseArgs(['--config', 'b.yaml', '--out', 'o', '--no-package'])).toEqual({ config: 'b.yaml', out: 'o', package: false });
    expect(parseArgs(['--config', 'b.yaml', '--preview'])).toEqual({ config: 'b.yaml', package: true, preview: true });
    expect(() => parseArgs(['--preview'])).toThrow('--preview: previews the derived objects of a custom build; add --config <file>');
    expect(parseArgs([])).toEqual({ package: true });
    expect(() => parseArgs(['--config'])).toThrow('--config: missing value');
    expect(() => parseArgs(['--values', 'x'])).toThrow('unknown argument --values');
  });
});

describe('loading a build config', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-config-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('reads YAML, and TypeScript modules through their default export', () => {
    fs.writeFileSync(path.join(dir, 'b.yaml'), 'release: { name: yaml-build }\n');
    fs.writeFileSync(path.join(dir, 'b.ts'), "export default { release: { name: 'ts-build' } };\n");
    expect(loadConfig(path.join(dir, 'b.yaml'))).toEqual({ release: { name: 'yaml-build' } });
    expect(loadConfig(path.join(dir, 'b.ts'))).toEqual({ release: { name: 'ts-build' } });
  });

  test('a missing file or broken YAML is an error naming --config', () => {
    expect(() => loadConfig(path.join(dir, 'nope.yaml'))).toThrow(/--config: .*nope\.yaml does not exist/);
    fs.writeFileSync(path.join(dir, 'bad.yaml'), 'values: [\n');
    expect(() => loadConfig(path.join(dir, 'bad.yaml'))).toThrow(/--config: .*bad\.yaml is not valid YAML/);
  });
});
