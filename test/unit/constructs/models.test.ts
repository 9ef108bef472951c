import { App, Chart } from 'cdk8s';
import { StaticModelError, StaticModels } from '../../../constructs/models';
import { desiredGatewayObjects, GatewayModel } from '../../../src/translate/gateway';

const model = {
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'PassthroughModel',
  metadata: { name: 'openai', namespace: 'llm' },
  spec: {
    provider: { backend: { type: 'OpenAI' }, hostname: 'api.openai.com', port: 443, credential: { secretRef: { name: 'k' } } },
    models: { declared: ['gpt-4o'] },
    access: { public: true },
    endpoints: { internal: { enabled: false } },
  },
} as unknown as GatewayModel;
const context = { baseDomain: 'example.com' };

describe('StaticModels', () => {
  test('renders the model only, by default', () => {
    const chart = new Chart(new App(), 'c');
    new StaticModels(chart, 'models', { models: [model], gatewayContext: context });
    expect(chart.toJson()).toEqual([JSON.parse(JSON.stringify(model))]);
  });

  test('renders exactly the translation’s objects, in its order, when asked for the derived objects', () => {
    const chart = new Chart(new App(), 'c');
    new StaticModels(chart, 'models', { models: [model], gatewayContext: context, includeModels: false, includeDerivedObjects: true });
    const expected = desiredGatewayObjects(model, context);
    expect(expected.errors).toEqual([]);
    expect(expected.objects.length).toBeGreaterThan(0);
    expect(chart.toJson()).toEqual(expected.objects.map((o) => JSON.parse(JSON.stringify(o))));
  });

  test('a model the translation refuses fails the build naming the model and field, also when only models are rendered', () => {
    const chart = new Chart(new App(), 'c');
    const bad = { ...model, spec: { ...(model as unknown as { spec: object }).spec, access: { public: false } } } as unknown as GatewayModel;
    expect(() => new StaticModels(chart, 'models', { models: [bad], gatewayContext: context })).toThrow(StaticModelError);
    expect(() => new StaticModels(new Chart(new App(), 'd'), 'models', { models: [bad], gatewayContext: context })).toThrow(/models\[0\] \(PassthroughModel llm\/openai\): spec\.access/);
  });

  test('every external policy of a build authenticates the keys of all the build\'s models on the external endpoint, as the operator renders them', () => {
    const named = (name: string, endpoints?: object) => ({ ...model, metadata: { name, namespace: 'llm' }, spec: { ...(model as unknown as { spec: object }).spec, ...(endpoints ? { endpoints } : {}) } }) as unknown as GatewayModel;
    const models = [named('c'), named('a'), named('b'), named('internal-only', { external: { enabled: false } })];
    const gatewayContext = { ...context, jwt: { issuer: 'https://id.example.com/realms/r', audiences: ['nebari-llm'] } };
    const chart = new Chart(new App(), 'c');
    new StaticModels(chart, 'models', { models, gatewayContext, includeModels: false, includeDerivedObjects: true });
    const policies = chart.toJson().filter((o) => o.kind === 'SecurityPolicy' && o.spec.apiKeyAuth);
    expect(policies.map((p) => p.metadata.name)).toEqual(['c-external-auth', 'a-external-auth', 'b-external-auth']);
    for (const p of policies) expect(p.spec.apiKeyAuth.credentialRefs.map((r: { name: string }) => r.name)).toEqual(['a-api-keys', 'b-api-keys', 'c-api-keys']);
    // The same objects the operator's translation gives one model once the others are on the endpoint.
    const operatorView = desiredGatewayObjects(models[0], { ...gatewayContext, externalEndpointKeySecrets: ['a-api-keys', 'b-api-keys'] });
    expect(chart.toJson().filter((o) => o.metadata.labels['llm.nebari.dev/model'] === 'c')).toEqual(operatorView.objects.map((o) => JSON.parse(JSON.stringify(o))));
  });
});
