import { migrationPlan } from '../../../src/cli/gateway/gateway-migrate';
import { dataPlaneSelector, ROLLOUT_ANNOTATION, rolloutPatch, rolloutState } from '../../../src/cli/gateway/gateway-roll-dataplane';
import type { KindStorage } from '../../../src/cli/gateway/gateway-objects';
import type { KubeObject } from '../../../src/kube/rest';

type Obj = KubeObject & { spec?: Record<string, unknown> };
const AI = 'aigateway.envoyproxy.io/v1alpha1';
const obj = (apiVersion: string, kind: string, namespace: string, name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Obj => ({
  apiVersion,
  kind,
  metadata: { name, namespace, uid: `${kind}-${namespace}-${name}`, ...metadata },
  spec,
});
const gateway = (annotations?: Record<string, string>) => obj('gateway.networking.k8s.io/v1', 'Gateway', 'gw', 'main', { gatewayClassName: 'eg' }, annotations ? { annotations } : {});
const route = (name: string, filterConfig?: unknown, backends: string[] = []) =>
  obj(AI, 'AIGatewayRoute', 'apps', name, { parentRefs: [{ name: 'main', namespace: 'gw' }], rules: [{ backendRefs: backends.map((b) => ({ name: b })) }], ...(filterConfig ? { filterConfig } : {}) });
const asb = (name: string, schema: Record<string, string>, metadata: Record<string, unknown> = {}) => obj(AI, 'AIServiceBackend', 'apps', name, { schema }, metadata);
const storage: KindStorage[] = [{ kind: 'GatewayConfig', crd: 'gatewayconfigs.aigateway.envoyproxy.io', installed: true, storageVersion: 'v1alpha1', servedVersions: ['v1alpha1'], storedVersions: ['v1alpha1'] }];
const plan = (objects: Obj[], s = storage) => migrationPlan([{ namespace: 'gw', name: 'main' }], objects, s);
const resources = { requests: { cpu: '200m' } };

describe('migrationPlan: schema.version', () => {
  test('moves an OpenAI version to the prefix, conditional on the old value', () => {
    const p = plan([gateway(), route('r', undefined, ['b']), asb('b', { name: 'OpenAI', version: 'api/v1' })]);
    expect(p.changes).toEqual([
      {
        object: 'AIServiceBackend apps/b',
        diff: ['- spec.schema.version: "api/v1"', '+ spec.schema.prefix: "api/v1"'],
        write: {
          type: 'json-patch',
          ref: { apiVersion: AI, kind: 'AIServiceBackend', metadata: { name: 'b', namespace: 'apps' } },
          ops: [{ op: 'test', path: '/spec/schema/version', value: 'api/v1' }, { op: 'add', path: '/spec/schema/prefix', value: 'api/v1' }, { op: 'remove', path: '/spec/schema/version' }],
        },
      },
    ]);
  });

  test('an equal prefix (leading slash or not) only loses the version; a different one is left for a person', () => {
    const same = plan([gateway(), route('r', undefined, ['b']), asb('b', { name: 'OpenAI', version: 'v1', prefix: '/v1' })]);
    expect(same.changes.map((c) => c.diff)).toEqual([['- spec.schema.version: "v1"']]);
    const different = plan([gateway(), route('r', undefined, ['b']), asb('b', { name: 'OpenAI', version: 'v1', prefix: '/openai/v1' })]);
    expect(different.changes).toEqual([]);
    expect(different.skipped[0]).toMatch(/differ; AI Gateway 0\.6\+ uses the prefix/);
  });

  test('ours, not OpenAI, or not on the Gateways: no change', () => {
    const p = plan([
      gateway(),
      route('r', undefined, ['ours', 'azure']),
      asb('ours', { name: 'OpenAI', version: 'v1' }, { labels: { 'app.kubernetes.io/managed-by': 'nebari-llm-serving' } }),
      asb('azure', { name: 'AzureOpenAI', version: '2025-01-01-preview' }),
      asb('unused', { name: 'OpenAI', version: 'v1' }),
    ]);
    expect(p.changes).toEqual([]);
    expect(p.skipped).toEqual([expect.stringMatching(/^AIServiceBackend apps\/ours: .*operator owns it/)]);
  });
});

describe('migrationPlan: filterConfig', () => {
  const fc = { type: 'ExternalProcessor', externalProcessor: { resources } };

  test('GatewayConfig, then the Gateway annotation, then removing each filterConfig', () => {
    const p = plan([gateway(), route('a', fc), route('b', { type: 'ExternalProcessor' })]);
    expect(p.changes.map((c) => [c.object, c.write.type])).toEqual([
      ['GatewayConfig gw/main-ai-gateway (new)', 'apply-gateway-config'],
      ['Gateway gw/main', 'annotate-gateway'],
      ['AIGatewayRoute apps/a', 'json-patch'],
      ['AIGatewayRoute apps/b', 'json-patch'],
    ]);
    expect(p.changes[0].write).toMatchObject({ apiVersion: 'aigateway.envoyproxy.io/v1alpha1', namespace: 'gw', name: 'main-ai-gateway', resources });
  });

  test('an annotated Gateway\'s GatewayConfig is used; equal resources there mean only the removal', () => {
    const config = obj(AI, 'GatewayConfig', 'gw', 'mine', { extProc: { kubernetes: { resources } } });
    const p = plan([gateway({ 'aigateway.envoyproxy.io/gateway-config': 'mine' }), config, route('a', fc)]);
    expect(p.changes.map((c) => c.object)).toEqual(['AIGatewayRoute apps/a']);
  });

  test.each([
    ['routes asking for different resources', [gateway(), route('a', fc), route('b', { type: 'ExternalProcessor', externalProcessor: { resources: { requests: { cpu: '1' } } } })], /ask for different external processor resources/],
    ['a GatewayConfig with other resources', [gateway({ 'aigateway.envoyproxy.io/gateway-config': 'mine' }), obj(AI, 'GatewayConfig', 'gw', 'mine', { extProc: { kubernetes: { resources: { limits: { cpu: '2' } } } } }), route('a', fc)], /already sets spec\.extProc\.kubernetes\.resources/],
  ])('%s: nothing changes on that Gateway', (_why, objects, message) => {
    const p = plan(objects);
    expect(p.changes).toEqual([]);
    expect(p.skipped).toEqual([expect.stringMatching(message)]);
  });

  test('a DynamicModule filter has no equivalent and is left alone', () => {
    const p = plan([gateway(), route('a', { type: 'DynamicModule' })]);
    expect(p.changes).toEqual([]);
    expect(p.skipped[0]).toMatch(/DynamicModule has no GatewayConfig equivalent/);
  });

  test('without a GatewayConfig CRD, resources have nowhere to go', () => {
    const p = plan([gateway(), route('a', fc)], []);
    expect(p.changes).toEqual([]);
    expect(p.skipped[0]).toMatch(/GatewayConfig CRD is not installed/);
  });
});

describe('roll-dataplane', () => {
  test('Envoy Gateway\'s proxy labels, per Gateway or per merged class', () => {
    expect(dataPlaneSelector({ namespace: 'gw', name: 'main' })).toBe(
      'app.kubernetes.io/managed-by=envoy-gateway,app.kubernetes.io/component=proxy,gateway.envoyproxy.io/owning-gateway-name=main,gateway.envoyproxy.io/owning-gateway-namespace=gw',
    );
    expect(dataPlaneSelector({ namespace: 'gw', name: 'main' }, 'eg')).toMatch(/owning-gatewayclass=eg$/);
  });

  test('the patch keeps the provider type and sets only the annotation', () => {
    const proxy = obj('gateway.envoyproxy.io/v1alpha1', 'EnvoyProxy', 'gw', 'p');
    expect(rolloutPatch(proxy, 'v')).toEqual({ spec: { provider: { type: 'Kubernetes', kubernetes: { envoyDeployment: { pod: { annotations: { [ROLLOUT_ANNOTATION]: 'v' } } } } } } });
  });

  const deployment = (annotation: string | undefined, status: Record<string, number> = {}) =>
    ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'gw', generation: 2 },
      spec: { replicas: 2, selector: {}, template: { metadata: { annotations: annotation ? { [ROLLOUT_ANNOTATION]: annotation } : {} } } },
      status: { observedGeneration: 2, updatedReplicas: 2, ...status },
    }) as never;
  const pod = (annotation: string, ready: boolean, deleting = false) =>
    ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', annotations: { [ROLLOUT_ANNOTATION]: annotation }, ...(deleting ? { deletionTimestamp: 't' } : {}) }, status: { conditions: [{ type: 'Ready', status: String(ready === true ? 'True' : 'False') }] } }) as never;

  test.each([
    ['template not updated yet', deployment('old'), [pod('new', true), pod('new', true)], false],
    ['one old pod left', deployment('new'), [pod('new', true), pod('new', true), pod('old', true)], false],
    ['a new pod not Ready', deployment('new'), [pod('new', true), pod('new', false)], false],
    ['a terminating new pod does not count', deployment('new'), [pod('new', true), pod('new', true, true)], false],
    ['generation not observed', deployment('new', { observedGeneration: 1 }), [pod('new', true), pod('new', true)], false],
    ['every pod new and Ready', deployment('new'), [pod('new', true), pod('new', true)], true],
  ])('%s', (_why, d, pods, done) => {
    expect(rolloutState(d, pods, 'new').done).toBe(done);
  });
});
