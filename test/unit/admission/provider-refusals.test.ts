// Offline admission refuses what the model's provider would refuse after admission (BuildFailed in
// the cluster), with the message the operator's BuildFailed condition carries.
import { admit } from '../../../src/admission';
import { convertTo } from '../../../src/api/conversion';
import type { LLMModelV1beta1 } from '../../../src/api/v1beta1';
import { describeErrors } from '../../../src/operator/generated-objects';
import { llmProvider } from '../../../src/translate/providers';

const operatorNamespace = 'models';
const llm = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'LLMModel',
  metadata: { name },
  spec: { model: { name: 'microsoft/phi-4', source: 'huggingface' }, resources: { gpu: { count: 1 } }, access: { public: true }, ...spec },
});
const kaito = { name: 'kaito' };

const refused: Array<[string, Record<string, unknown>, string]> = [
  ['KAITO with source oci', llm('k-oci', { provider: kaito, model: { name: 'phi', source: 'oci', image: 'registry.example.com/phi:1' } }), 'spec.model.source: oci is not supported by the KAITO provider'],
  ['KAITO with replicas 2', llm('k-two', { provider: kaito, serving: { replicas: 2 } }), 'spec.serving.replicas: 2 is not supported by the KAITO provider'],
  ['KAITO with engineArgs', llm('k-args', { provider: kaito, serving: { engineArgs: ['--max-model-len=8192'] } }), 'spec.serving.engineArgs: are not passed by the KAITO provider'],
  ['KubeRay with 0 GPUs', llm('ray-cpu', { provider: { name: 'kuberay' }, resources: { gpu: { count: 0 } } }), 'spec.resources.gpu.count: is 0, but the kuberay provider runs vLLM on GPU workers'],
  [
    'llm-d with a schedulerConfig without apiVersion and kind',
    llm('llmd-cfg', { provider: { name: 'llmd' }, inferencePool: { schedulerConfig: { plugins: [{ type: 'prefix-cache-scorer' }] } } }),
    'spec.inferencePool.schedulerConfig: has no apiVersion and kind',
  ],
];

describe('offline admission runs the provider translation', () => {
  it.each(refused)('%s is refused with the BuildFailed message', async (_name, object, message) => {
    const result = await admit(object, { operatorNamespace });
    expect(result.admitted).toBe(false);
    expect(result.problems).toEqual([expect.objectContaining({ source: 'provider', message: expect.stringContaining(message) })]);
    // The operator's condition message for the stored object, word for word.
    const admittedObject = { ...object, metadata: { ...object.metadata as object, namespace: operatorNamespace } } as unknown as LLMModelV1beta1;
    const { errors } = llmProvider(admittedObject.spec.provider!.name!).translate(result.object as unknown as LLMModelV1beta1, {});
    expect(result.problems.map((p) => p.message).join('; ')).toBe(describeErrors(errors));
  });

  it('a v1alpha1 object is translated as the operator reads it (v1beta1) and refused the same way', async () => {
    const beta = llm('k-alpha', { provider: kaito, serving: { replicas: 2 } });
    const converted = convertTo(beta, 'llm.nebari.dev/v1alpha1');
    if (!converted.ok) throw new Error(converted.reason);
    const result = await admit(converted.object, { operatorNamespace });
    expect(result.admitted).toBe(false);
    expect(result.problems).toEqual([expect.objectContaining({ source: 'provider', field: 'spec.serving.replicas' })]);
  });

  it('a model its provider accepts is admitted', async () => {
    const result = await admit(llm('k-ok', { provider: kaito }), { operatorNamespace });
    expect(result.problems).toEqual([]);
    expect(result.admitted).toBe(true);
  });
});
