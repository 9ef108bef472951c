// The endpoint picker every LLMModel provider deploys, as EPP v1.0.2 needs it: a configuration
// file (it exits without one), a health port the probes ask, and read access to the kinds it watches.
import { parse as parseYaml } from 'yaml';
import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import { DEFAULT_EPP_CONFIG, endpointPickerObjects } from '../../../../src/translate/providers/serving-objects';

const model = {
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'LLMModel',
  metadata: { name: 'qwen', namespace: 'ml', uid: 'uid-1' },
  spec: { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' }, resources: { gpu: { count: 1, type: 'nvidia' } }, access: { public: true } },
} as LLMModel;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const find = (kind: string): Record<string, any> => endpointPickerObjects(model, {}).find((o) => o.kind === kind && o.metadata.name === 'qwen-epp')!;

describe('endpoint picker objects', () => {
  it('passes --config-file with the scheduling configuration mounted from its own ConfigMap', () => {
    const pod = find('Deployment').spec.template.spec;
    const epp = pod.containers[0];
    expect(epp.args).toContain('--config-file=/config/config.yaml');
    expect(epp.args.filter((a: string) => a.startsWith('--config-text'))).toEqual([]);
    expect(epp.volumeMounts).toEqual([{ name: 'config', mountPath: '/config', readOnly: true }]);
    expect(pod.volumes).toEqual([{ name: 'config', configMap: { name: 'qwen-epp' } }]);
    const configMap = find('ConfigMap');
    expect(configMap.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'LLMModel', name: 'qwen', uid: 'uid-1', controller: true })]);
    expect(configMap.data).toEqual({ 'config.yaml': DEFAULT_EPP_CONFIG });
  });

  it('configures the Inference Extension chart\'s default plugins, in one default profile', () => {
    expect(parseYaml(DEFAULT_EPP_CONFIG)).toEqual({
      apiVersion: 'inference.networking.x-k8s.io/v1alpha1',
      kind: 'EndpointPickerConfig',
      plugins: [{ type: 'queue-scorer' }, { type: 'kv-cache-utilization-scorer' }, { type: 'prefix-cache-scorer' }],
      schedulingProfiles: [{ name: 'default', plugins: [{ pluginRef: 'queue-scorer' }, { pluginRef: 'kv-cache-utilization-scorer' }, { pluginRef: 'prefix-cache-scorer' }] }],
    });
  });

  it('is Ready only when its gRPC health service says serving (the pool has synced)', () => {
    const epp = find('Deployment').spec.template.spec.containers[0];
    expect(epp.args).toContain('--grpc-health-port=9003');
    expect(epp.ports).toContainEqual({ name: 'grpc-health', containerPort: 9003, protocol: 'TCP' });
    expect(epp.readinessProbe).toEqual({ grpc: { port: 9003, service: 'inference-extension' }, periodSeconds: 2 });
    expect(epp.livenessProbe).toEqual({ grpc: { port: 9003, service: 'inference-extension' }, initialDelaySeconds: 5, periodSeconds: 10 });
  });

  it('rolls the picker when its configuration changes (it reads the file only at start)', () => {
    const hash = (config?: string) => endpointPickerObjects(model, {}, config).find((o) => o.kind === 'Deployment')!.spec as { template: { metadata: { annotations: Record<string, string> } } };
    expect(hash().template.metadata.annotations['llm.nebari.dev/endpoint-picker-config-hash']).toMatch(/^[0-9a-f]+$/);
    expect(hash('{"kind":"EndpointPickerConfig"}').template.metadata.annotations).not.toEqual(hash().template.metadata.annotations);
  });

  it('lets the picker read pods, InferencePools and InferenceObjectives in its namespace, nothing else', () => {
    expect(find('Role').rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['inference.networking.x-k8s.io'], resources: ['inferenceobjectives'], verbs: ['get', 'list', 'watch'] },
    ]);
  });
});
