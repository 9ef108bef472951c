// Admission of spec.routing (src/webhook/routing.ts): each bad list gets one denial naming the
// field and the fix; well-formed fallback and split lists pass.
import { llmModelRoutingFindings, passthroughRoutingFindings, routingTargetFindings } from '../../../src/webhook/routing';
import { Findings } from '../../../src/webhook/verdict';

const pm = (name: string, spec: object) => ({ kind: 'PassthroughModel', metadata: { name }, spec });
const namespace = 'nebari-llm-serving-system';
const others = [
  pm('backup', { models: { declared: ['backup-id'] } }),
  pm('any', { models: { catchAll: true } }),
  pm('loops', { models: { declared: ['loop-id'] }, routing: { fallback: [{ name: 'primary', model: 'gpt' }] } }),
  { kind: 'LLMModel', metadata: { name: 'llama' }, spec: { model: { name: 'meta/llama' } } },
];

function targetDenials(routing: object): readonly string[] {
  const findings = new Findings();
  routingTargetFindings(pm('primary', { models: { declared: ['gpt'] }, routing }), namespace, others, findings);
  return findings.denials;
}

function fieldDenials(routing: object): readonly string[] {
  const findings = new Findings();
  passthroughRoutingFindings('primary', routing, findings);
  return findings.denials;
}

test.each([
  ['an existing model with the id override it serves', { fallback: [{ name: 'backup', model: 'backup-id' }] }],
  ['a catch-all model (it takes any id)', { fallback: [{ name: 'any' }], split: [] }],
  ['a split with the override', { split: [{ name: 'backup', weight: 10, model: 'backup-id' }] }],
])('admitted: %s', (_name, routing) => {
  expect(targetDenials(routing)).toEqual([]);
  expect(fieldDenials(routing)).toEqual([]);
});

test.each([
  ['an unknown model', { fallback: [{ name: 'nowhere' }] }, [`spec.routing.fallback[0].name: there is no PassthroughModel "nowhere" in "${namespace}"; create it first or remove it from the list`]],
  [
    'an LLMModel (InferencePool) mixed with providers',
    { fallback: [{ name: 'llama' }] },
    ['spec.routing.fallback[0].name: "llama" is an LLMModel, and Envoy AI Gateway v1.1 routes a rule either to one InferencePool or to provider backends, never both (envoyproxy/ai-gateway#1256); name a PassthroughModel'],
  ],
  [
    'a model that does not serve the id it would be sent',
    { split: [{ name: 'backup', weight: 5 }] },
    ['spec.routing.split[0]: PassthroughModel "backup" serves "backup-id", not "gpt"; set spec.routing.split[0].model to the id it serves (the gateway sends that id to its provider), or declare the id there'],
  ],
  [
    'a cycle through another model\'s fallback',
    { fallback: [{ name: 'loops', model: 'loop-id' }] },
    ['spec.routing.fallback[0].name: "loops" leads back to this model (primary -> loops -> primary); remove one link of the cycle'],
  ],
])('refused: %s', (_name, routing, expected) => {
  expect(targetDenials(routing)).toEqual(expected);
});

test.each([
  ['this model itself', { fallback: [{ name: 'primary' }] }, ['spec.routing.fallback[0].name: "primary" is this model itself; name another PassthroughModel']],
  [
    'a duplicate',
    { fallback: [{ name: 'backup' }, { name: 'backup' }] },
    ['spec.routing.fallback[1].name: "backup" is already listed at spec.routing.fallback[0]; remove the duplicate'],
  ],
  [
    'a model in both lists',
    { fallback: [{ name: 'backup' }], split: [{ name: 'backup', weight: 1 }] },
    ['spec.routing.split[0].name: "backup" is also in spec.routing.fallback; a split model already takes requests, so remove it from one list'],
  ],
  ['weight without a split', { weight: 50 }, ['spec.routing.weight applies only with spec.routing.split; remove it or list the models to split with']],
  [
    'every weight 0',
    { weight: 0, split: [{ name: 'backup', weight: 0 }] },
    ['spec.routing: every weight is 0, so no request could be routed; give spec.routing.weight or one split model a weight above 0'],
  ],
])('refused by the field rules: %s', (_name, routing, expected) => {
  expect(fieldDenials(routing)).toEqual(expected);
});

test('LLMModel: fallback and split are refused with the upstream reason; retries and timeouts pass', () => {
  const findings = new Findings();
  llmModelRoutingFindings({ retries: { attempts: 2 }, timeouts: { streamIdle: '30s' } }, findings);
  expect(findings.denials).toEqual([]);
  llmModelRoutingFindings({ fallback: [{ name: 'x' }], split: [{ name: 'y', weight: 1 }] }, findings);
  expect(findings.denials).toEqual([
    'spec.routing.fallback is not supported for an LLMModel: Envoy AI Gateway v1.1 routes a rule either to one InferencePool or to provider backends, never both (envoyproxy/ai-gateway#1256); remove it, or give clients a PassthroughModel whose fallback lists providers',
    'spec.routing.split is not supported for an LLMModel: Envoy AI Gateway v1.1 routes a rule either to one InferencePool or to provider backends, never both (envoyproxy/ai-gateway#1256); remove it',
  ]);
});
