// spec.observability.tracing on every provider: the engines that run vLLM get the OTLP endpoint as
// an engine argument and the OpenTelemetry SDK's sampler settings as environment; KAITO, which
// builds its own pod, refuses the block with the field named.
import { parse } from 'yaml';
import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import { tracingEngineSettings } from '../../../../src/api/tracing';
import { DYNAMO_WORKER, translateDynamo } from '../../../../src/translate/providers/dynamo';
import { translateKAITO } from '../../../../src/translate/providers/kaito';
import { translateKubeRay } from '../../../../src/translate/providers/kuberay';
import { translateLLMD } from '../../../../src/translate/providers/llmd';
import { translateVLLM } from '../../../../src/translate/providers/vllm';
import { Findings } from '../../../../src/webhook/verdict';
import { llmModelFieldFindings } from '../../../../src/webhook/llmmodel';

const tracing = { endpoint: 'http://otel-collector.observability:4317', sampler: 'traceidratio' as const, ratio: 0.1 };
const expectedEnv = [
  { name: 'OTEL_SERVICE_NAME', value: 'qwen' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', value: 'grpc' },
  { name: 'OTEL_TRACES_SAMPLER', value: 'traceidratio' },
  { name: 'OTEL_TRACES_SAMPLER_ARG', value: '0.1' },
];

function model(provider: string, extra: Partial<LLMModel['spec']> = {}): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'qwen', namespace: 'ml', uid: 'u1' },
    spec: {
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
      provider: { name: provider },
      resources: { gpu: { count: 1, type: 'nvidia' } },
      access: { public: true },
      serving: { image: 'example/engine:1' },
      observability: { tracing },
      ...extra,
    },
  } as LLMModel;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const find = (objects: any[], kind: string) => objects.find((o) => o.kind === kind);

describe('tracing of the serving engine', () => {
  it('defaults to grpc, the parent-based ratio sampler and every request', () => {
    expect(tracingEngineSettings({ endpoint: 'http://c:4317' }, 'm')).toEqual({
      args: ['--otlp-traces-endpoint=http://c:4317'],
      env: [
        { name: 'OTEL_SERVICE_NAME', value: 'm' },
        { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', value: 'grpc' },
        { name: 'OTEL_TRACES_SAMPLER', value: 'parentbased_traceidratio' },
        { name: 'OTEL_TRACES_SAMPLER_ARG', value: '1' },
      ],
    });
    expect(tracingEngineSettings(undefined, 'm')).toEqual({ args: [], env: [] });
  });

  it.each([
    ['vllm', translateVLLM],
    ['llm-d', translateLLMD],
  ])('%s: the vLLM container gets the endpoint argument before the user args, and the sampler environment before the user env', (provider, translate) => {
    const t = translate(model(provider, { serving: { image: 'example/engine:1', engineArgs: ['--otlp-traces-endpoint=http://mine:4317'], env: [{ name: 'OTEL_TRACES_SAMPLER_ARG', value: '0.5' }] } }), {});
    expect(t.errors).toEqual([]);
    const container = find(t.objects, 'Deployment').spec.template.spec.containers[0];
    // The user's own argument and variable come later, so they win.
    expect(container.args.slice(-2)).toEqual(['--otlp-traces-endpoint=http://otel-collector.observability:4317', '--otlp-traces-endpoint=http://mine:4317']);
    expect(container.env).toEqual([...expectedEnv, { name: 'OTEL_TRACES_SAMPLER_ARG', value: '0.5' }]);
  });

  it('dynamo: the vLLM worker gets the argument and the environment', () => {
    const t = translateDynamo(model('dynamo'), {});
    expect(t.errors).toEqual([]);
    const worker = find(t.objects, 'DynamoGraphDeployment').spec.services[DYNAMO_WORKER];
    expect(worker.extraPodSpec.mainContainer.args).toContain('--otlp-traces-endpoint=http://otel-collector.observability:4317');
    expect(worker.envs).toEqual(expect.arrayContaining(expectedEnv));
  });

  it('kuberay: the endpoint is an engine keyword argument, the sampler environment is on the head and workers', () => {
    const t = translateKubeRay(model('kuberay'), {});
    expect(t.errors).toEqual([]);
    const rs = find(t.objects, 'RayService');
    const config = parse(rs.spec.serveConfigV2, { version: '1.1' });
    expect(JSON.stringify(config)).toContain('"otlp_traces_endpoint":"http://otel-collector.observability:4317"');
    const cluster = rs.spec.rayClusterConfig;
    expect(cluster.headGroupSpec.template.spec.containers[0].env).toEqual(expect.arrayContaining(expectedEnv));
    for (const group of cluster.workerGroupSpecs) expect(group.template.spec.containers[0].env).toEqual(expect.arrayContaining(expectedEnv));
  });

  it('kaito: refused, naming the field and the fix', () => {
    const t = translateKAITO(model('kaito', { serving: undefined, model: { name: 'microsoft/phi-4', source: 'huggingface' } }), {});
    expect(t.errors.map((e) => e.message)).toEqual([expect.stringMatching(/^spec\.observability\.tracing: is not supported by the KAITO provider.*use provider vllm$/)]);
  });

  it('admission refuses an endpoint that is not an absolute http(s) URL, naming the field', () => {
    for (const [endpoint, expected] of [
      ['otel-collector:4317', 'spec.observability.tracing.endpoint: "otel-collector:4317" is not an absolute URL'],
      ['grpc://otel-collector:4317', 'uses the scheme "grpc"; use http or https'],
      ['http://user:pw@otel-collector:4317', 'contains a user name or password'],
    ] as const) {
      const findings = new Findings();
      llmModelFieldFindings(model('vllm', { observability: { tracing: { endpoint } } }), findings);
      expect(findings.denials).toEqual([expect.stringContaining(expected)]);
    }
    const ok = new Findings();
    llmModelFieldFindings(model('vllm'), ok);
    expect(ok.denials).toEqual([]);
  });
});
