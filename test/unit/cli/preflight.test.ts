// `nls preflight`'s pure parts: the writable form of a stored object, the offline admission of
// stored objects as CREATEs, the report and the version rule.
import { formatPreflight, type PreflightReport, runPreflight, versionMismatch } from '../../../src/cli/lifecycle/preflight';
import { admitStoredObjects, writableForm } from '../../../src/cli/lifecycle/preflight-objects';
import { version } from '../../../src/version';

const stored = (name: string, hostname: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'PassthroughModel',
  metadata: {
    name,
    namespace: 'llm',
    uid: '0b5c',
    resourceVersion: '812',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
    labels: { team: 'a' },
    finalizers: ['llm.nebari.dev/cleanup'],
    ...extra,
  },
  spec: { provider: { hostname, credentialSecretName: 'key' }, models: { declared: [`gpt-4.1-${name}`] }, access: { public: true } },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});

test('the writable form drops status and server-populated metadata, keeps labels and finalizers', () => {
  const form = writableForm(stored('p', 'api.openai.com'));
  expect(form.status).toBeUndefined();
  expect(form.metadata).toEqual({ name: 'p', namespace: 'llm', labels: { team: 'a' }, finalizers: ['llm.nebari.dev/cleanup'] });
});

test('stored objects are admitted as CREATEs: an invalid stored hostname is a finding with its field and fix', async () => {
  const { checked, findings } = await admitStoredObjects([stored('ok', 'api.openai.com'), stored('legacy', 'api_internal.example.com')], 'llm', []);
  expect(checked).toBe(2);
  expect(findings).toEqual([
    {
      severity: 'error',
      kind: 'PassthroughModel',
      namespace: 'llm',
      name: 'legacy',
      field: 'spec.provider.hostname',
      message: expect.stringContaining('underscore'),
      fix: 'correct spec.provider.hostname (kubectl edit passthroughmodel legacy -n llm, or in the manifests your GitOps tool applies), then run nls preflight again',
    },
  ]);
});

test('stored models serving one model id on one endpoint are findings naming the other model (issue 29, Low)', async () => {
  const shared = (name: string) => ({ ...stored(name, 'api.openai.com'), spec: { ...stored(name, 'api.openai.com').spec, models: { declared: ['gpt-4.1'] } } });
  const { findings } = await admitStoredObjects([shared('first'), shared('second')], 'llm', []);
  expect(findings.map((f) => `${f.name} ${f.field}`)).toContain('first spec.models.declared');
  expect(findings.find((f) => f.name === 'first')?.message).toContain('model id "gpt-4.1" is already served on the external endpoint by PassthroughModel second');
});

test('a field this release does not declare is a warning (pruned on the next write), not a refusal', async () => {
  const withExtra = stored('extra', 'api.openai.com');
  (withExtra.spec as Record<string, unknown>).testOnlyNote = 'from a newer release';
  const { findings } = await admitStoredObjects([withExtra], 'llm', []);
  expect(findings.map((f) => `${f.severity} ${f.field}`)).toEqual(['warning spec.testOnlyNote']);
});

test('a stored model its provider refuses is a warning (admitted, BuildFailed), not a refusal that blocks the upgrade', async () => {
  const ray = {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'ray-cpu', namespace: 'llm' },
    spec: { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' }, provider: { name: 'kuberay' }, resources: { gpu: { count: 0 } }, access: { public: true } },
  };
  const { findings } = await admitStoredObjects([ray], 'llm', []);
  expect(findings).toEqual([expect.objectContaining({ severity: 'warning', field: 'spec.resources.gpu.count', message: expect.stringContaining('its provider refuses it, so the model reports BuildFailed') })]);
});

test('objects being deleted are not checked; references between stored objects resolve; agent namespaces come from the installation', async () => {
  const agent = {
    apiVersion: 'llm.nebari.dev/v1alpha1',
    kind: 'AgentDeployment',
    metadata: { name: 'bot', namespace: 'llm' },
    spec: { image: 'registry.example.com/bot:1', model: { modelRef: { kind: 'PassthroughModel', name: 'ok', modelName: 'gpt-4.1' } } },
  };
  const result = await admitStoredObjects([stored('ok', 'api.openai.com'), stored('gone', 'api_x.example.com', { deletionTimestamp: '2026-01-02T00:00:00Z' }), agent], 'llm', []);
  expect(result).toEqual({ checked: 2, findings: [] });
  const elsewhere = { ...agent, metadata: { name: 'bot', namespace: 'team-a' } };
  const outside = await admitStoredObjects([stored('ok', 'api.openai.com'), elsewhere], 'llm', []);
  expect(outside.findings.map((f) => `${f.kind} ${f.namespace}/${f.name}: ${f.message}`)).toEqual([expect.stringMatching(/^AgentDeployment team-a\/bot: .*team-a/)]);
});

test('the report lists each finding with its fix and ends with the verdict', () => {
  const report: PreflightReport = {
    checkedVersion: version,
    targetVersion: version,
    release: 'r',
    namespace: 'llm',
    objects: {
      checked: 4,
      notServed: ['AgentDeployment'],
      findings: [
        { severity: 'error', kind: 'PassthroughModel', namespace: 'llm', name: 'p', field: 'spec.provider.hostname', message: 'has a port', fix: 'correct it' },
        { severity: 'warning', kind: 'PassthroughModel', namespace: 'llm', name: 'p', field: 'spec.note', message: 'unknown field', fix: 'remove it' },
      ],
    },
    gateway: [{ component: 'AI Gateway controller', severity: 'warning', message: 'not found', fix: 'check by hand' }],
    blocked: true,
  };
  expect(formatPreflight(report)).toEqual([
    `stored objects: 4 checked with the admission of ${version}, 1 would be refused`,
    '  note: AgentDeployment is not served by the API server (its CRD is not installed); nothing to check',
    '  ERROR PassthroughModel llm/p: spec.provider.hostname: has a port',
    '        fix: correct it',
    '  warning PassthroughModel llm/p: spec.note: unknown field',
    '        fix: remove it',
    'gateway stack: 0 error(s), 1 warning(s)',
    '  warning AI Gateway controller: not found',
    '        fix: check by hand',
    `preflight: 1 problem(s) block the upgrade to ${version}; fix them and run nls preflight again`,
  ]);
});

test('--version: only this nls version (with or without v) is checked; another names the nls to run', async () => {
  expect(versionMismatch(version)).toBeUndefined();
  expect(versionMismatch(`v${version}`)).toBeUndefined();
  expect(versionMismatch('9.9.9')).toContain('run the nls of 9.9.9');
  const out: string[] = [];
  expect(await runPreflight(['--version', '9.9.9'], (l) => out.push(l))).toBe(2);
  expect(out.join('\n')).toContain(`this nls is ${version}`);
  expect(await runPreflight(['--output', 'yaml'], (l) => out.push(l))).toBe(2);
  expect(out.join('\n')).toContain('--output "yaml" is not supported; use text or json');
});
