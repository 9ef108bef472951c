// Every name the operator derives from an LLMModel name must be valid for its kind, for every name
// the CRD admits: the admission rule (LLMMODEL_NAME_PATTERN, plus the 63-character rule that a
// subdomain lifts) and the derivations are checked together, at the boundary lengths.
import { LLM_PROVIDERS, LLMMODEL_NAME_PATTERN } from '../../../../src/api/llmmodel';
import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import { gatewayObjectNames } from '../../../../src/translate/gateway/names';
import { providers } from '../../../../src/translate/providers';
import { dynamoObjectNames } from '../../../../src/translate/providers/dynamo';
import { kaitoWorkspaceName } from '../../../../src/translate/providers/kaito';
import { kuberayObjectNames } from '../../../../src/translate/providers/kuberay';

const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const admitted = (name: string) => new RegExp(LLMMODEL_NAME_PATTERN).test(name) && name.length <= 253;

function model(name: string, provider: LLMModel['spec']['provider']): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name, namespace: 'models', uid: '00000000-0000-0000-0000-000000000001' },
    spec: { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' }, resources: { gpu: { count: 1, type: 'nvidia' } }, access: { public: true }, provider },
  };
}

describe('names derived from an admitted LLMModel name', () => {
  it.each(['llama-3.1-8b', '3b-model', 'qwen.3', 'm.'])('the CRD refuses %j, whose Services could never be created', (name) => {
    expect(admitted(name)).toBe(false);
  });

  const names = ['a', 'llama-3-1-8b', `l${'x'.repeat(58)}`, `l${'x'.repeat(62)}`, `l${'x'.repeat(63)}`, `l${'-x'.repeat(126)}`];
  it.each(names.flatMap((name) => LLM_PROVIDERS.map((provider) => [name.length, provider, name] as const)))(
    'a %d-character name served by %s gives valid Service, object and label names',
    (_length, provider, name) => {
      expect(admitted(name)).toBe(true);
      const translation = providers[provider].translate(model(name, { name: provider }), {}, {});
      const serviceNames = [
        gatewayObjectNames(name).endpointPicker,
        ...translation.objects.filter((o) => o.kind === 'Service').map((o) => String((o.metadata as { name: string }).name)),
      ];
      if (provider === 'kaito') serviceNames.push(kaitoWorkspaceName(name), `${kaitoWorkspaceName(name)}-headless`);
      if (provider === 'dynamo') serviceNames.push(dynamoObjectNames(name).frontendService);
      if (provider === 'kuberay') serviceNames.push(kuberayObjectNames(name).serveService);
      for (const service of serviceNames) {
        expect(service).toMatch(dns1035);
        expect(service.length).toBeLessThanOrEqual(63);
      }
      for (const object of translation.objects) {
        const metadata = object.metadata as { name: string; labels?: Record<string, string> };
        expect(metadata.name).toMatch(subdomain);
        expect(metadata.name.length).toBeLessThanOrEqual(63);
        for (const value of Object.values(metadata.labels ?? {})) {
          expect(value).toMatch(labelValue);
          expect(value.length).toBeLessThanOrEqual(63);
        }
      }
    },
  );
});
