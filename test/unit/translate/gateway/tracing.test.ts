// Gateway tracing (chart values platform.tracing): every model route's BackendTrafficPolicy gets
// the sampling share and span tags; off, no policy is rendered for tracing alone.
import { desiredGatewayObjects } from '../../../../src/translate/gateway';
import type { GatewayContext, GeneratedGatewayObject } from '../../../../src/translate/gateway';
import { resolveGatewayContext } from '../../../../src/translate/gateway/context';
import { llmModel, passthroughModel } from './model-matrix';

const base = { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] } };
const provider = { hostname: 'api.openai.com', credential: { secretRef: { name: 'k' } } };

function policies(ctx: GatewayContext, model: Parameters<typeof desiredGatewayObjects>[0] = passthroughModel('gpt', { provider } as never)) {
  const result = desiredGatewayObjects(model, ctx);
  expect(result.errors).toEqual([]);
  const policy = (name: string) => result.objects.find((o) => o.kind === 'BackendTrafficPolicy' && o.metadata.name === name) as (GeneratedGatewayObject & { spec: Record<string, unknown> }) | undefined;
  return { ...result, policy };
}

test('on: both endpoints of a model get the share over 10,000 and tags naming the model and endpoint', () => {
  const { policy } = policies({ ...base, tracing: { enabled: true, samplingRatio: 0.25 } });
  expect(policy('gpt-external-quota')?.spec).toEqual({
    targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'gpt-external' }],
    telemetry: {
      tracing: {
        samplingFraction: { numerator: 2500, denominator: 10000 },
        tags: {
          'nebari.llm.model': 'gpt',
          'nebari.llm.model_kind': 'PassthroughModel',
          'nebari.llm.namespace': 'models',
          'nebari.llm.endpoint': 'external',
        },
      },
    },
  });
  expect(policy('gpt-internal-traffic')?.spec.telemetry).toEqual({
    tracing: {
      samplingFraction: { numerator: 2500, denominator: 10000 },
      tags: { 'nebari.llm.model': 'gpt', 'nebari.llm.model_kind': 'PassthroughModel', 'nebari.llm.namespace': 'models', 'nebari.llm.endpoint': 'internal' },
    },
  });
});

test('LLMModels are tagged with their kind; the share defaults to every request', () => {
  const { policy } = policies({ ...base, tracing: { enabled: true } }, llmModel('llama'));
  const tracing = (policy('llama-external-quota')?.spec.telemetry as { tracing: { samplingFraction: object; tags: Record<string, string> } }).tracing;
  expect(tracing.samplingFraction).toEqual({ numerator: 10000, denominator: 10000 });
  expect(tracing.tags['nebari.llm.model_kind']).toBe('LLMModel');
});

test('off (the default, or enabled false with a share set): no policy for tracing alone, and a left-over one is deleted', () => {
  for (const ctx of [base, { ...base, tracing: { enabled: false, samplingRatio: 0.5 } }]) {
    const { objects, deletions } = policies(ctx);
    expect(objects.filter((o) => o.kind === 'BackendTrafficPolicy')).toEqual([]);
    expect(deletions.filter((d) => d.object.kind === 'BackendTrafficPolicy').map((d) => d.object.name).sort()).toEqual(['gpt-external-quota', 'gpt-internal-traffic']);
  }
});

test('a share outside 0..1 is refused naming the chart value and the fix', () => {
  const { errors } = resolveGatewayContext({ ...base, tracing: { enabled: true, samplingRatio: 1.5 } });
  expect(errors).toEqual([expect.objectContaining({ field: 'platform.tracing.samplingRatio', message: expect.stringContaining('between 0 (no request traced) and 1 (every request)') })]);
});
