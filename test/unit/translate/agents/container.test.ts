import type { AgentDeploymentV1beta1 as AgentDeployment } from '../../../../src/api/v1beta1';
import { desiredAgentObjects, modelEnv, ResolvedModelBinding } from '../../../../src/translate/agents/container';

function agent(spec: Partial<AgentDeployment['spec']>): AgentDeployment {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'AgentDeployment',
    metadata: { name: 'helper', namespace: 'team', uid: 'a-1' },
    spec: { container: { image: 'example/agent:1' }, model: { modelRef: { kind: 'LLMModel', name: 'qwen' } }, ...spec },
  } as AgentDeployment;
}

const gatewayBinding: ResolvedModelBinding = {
  bindingMode: 'modelRef',
  apiType: 'openai',
  baseURL: 'https://llm.example.com/v1',
  modelName: 'Qwen/Qwen3-8B',
  credentialsRef: { name: 'helper-model-key', key: 'apiKey' },
};

describe('agent environment', () => {
  it('injects OPENAI_* with the key from a Secret reference, never a literal', () => {
    expect(modelEnv(gatewayBinding)).toEqual([
      { name: 'OPENAI_BASE_URL', value: 'https://llm.example.com/v1' },
      { name: 'OPENAI_MODEL', value: 'Qwen/Qwen3-8B' },
      { name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'helper-model-key', key: 'apiKey' } } },
    ]);
  });
  it.each([
    ['anthropic', ['ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'ANTHROPIC_API_KEY']],
    ['azureOpenAI', ['AZURE_OPENAI_ENDPOINT', 'AZURE_OPENAI_DEPLOYMENT', 'AZURE_OPENAI_API_KEY']],
    ['custom', ['OPENAI_BASE_URL', 'OPENAI_MODEL', 'OPENAI_API_KEY']],
  ] as const)('uses the %s names', (apiType, names) => {
    expect(modelEnv({ ...gatewayBinding, apiType }).map((e) => e.name)).toEqual(names);
  });
});

describe('desiredAgentObjects', () => {
  it('renders ConfigMap, Deployment and Service owned by the agent, with OTLP settings', () => {
    const t = desiredAgentObjects(agent({ observability: { otlp: { endpoint: 'http://otel:4317' } } }), gatewayBinding);
    expect(t.errors).toEqual([]);
    expect(t.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['ConfigMap/helper-config', 'Deployment/helper', 'Service/helper']);
    expect(t.address).toBe('http://helper.team.svc:8080');
    expect(Object.keys(t.objects[1]).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    const container = (t.objects[1] as any).spec.template.spec.containers[0]; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(container.env).toContainEqual({ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel:4317' });
    // An omitted protocol is v1beta1's default (a v1alpha1 object always converts with its protocol written out).
    expect(container.env).toContainEqual({ name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: 'http/protobuf' });
    const config = JSON.parse((t.objects[0] as any).data['agent.json']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(config.model).toEqual({ bindingMode: 'modelRef', apiType: 'openai', baseURL: 'https://llm.example.com/v1', modelName: 'Qwen/Qwen3-8B' });
    for (const o of t.objects) expect(o.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'AgentDeployment', uid: 'a-1', controller: true });
  });

  it('renders a Job without a Service for the job lifecycle', () => {
    const t = desiredAgentObjects(agent({ lifecycle: 'job' }), gatewayBinding);
    expect(t.objects.map((o) => o.kind)).toEqual(['ConfigMap', 'Job']);
    expect((t.objects[1] as any).spec.template.spec.restartPolicy).toBe('Never'); // eslint-disable-line @typescript-eslint/no-explicit-any
  });

  it('refuses a framework it does not know, naming the fix', () => {
    const t = desiredAgentObjects(agent({ container: undefined, framework: { name: 'kagent' } }), gatewayBinding);
    expect(t.errors[0].message).toBe('spec.framework.name: framework "kagent" is not registered with this operator; set spec.container.image to run the agent container directly');
  });
});

// A rotated agent key reaches running pods only when they restart: the key's client ID on the pod
// template rolls a Deployment; a Job's template is immutable and gets none (issue 29, Medium 4).
describe('the agent key on the pod template', () => {
  const template = (o: { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } }) => o.spec?.template?.metadata?.annotations;
  it('annotates a Deployment with the client ID of its key, and not a Job', () => {
    const rotated = { ...gatewayBinding, credentialsVersion: 'user-agentdeployment-team-helper-qwen-0123' };
    const deployment = desiredAgentObjects(agent({}), rotated).objects.find((o) => o.kind === 'Deployment')!;
    expect(template(deployment as never)).toEqual({ 'llm.nebari.dev/model-key-client-id': 'user-agentdeployment-team-helper-qwen-0123' });
    const job = desiredAgentObjects(agent({ lifecycle: 'job' }), rotated).objects.find((o) => o.kind === 'Job')!;
    expect(template(job as never)).toBeUndefined();
    expect(template(desiredAgentObjects(agent({}), gatewayBinding).objects.find((o) => o.kind === 'Deployment') as never)).toBeUndefined();
  });
});
