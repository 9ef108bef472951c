// The kinds' schemas agree with their TypeScript types, their examples and their defaults.
import Ajv from 'ajv';
import {
  AgentDeploymentV1beta1Schema,
  AGENTDEPLOYMENT_DEFINITION,
  AGENTDEPLOYMENT_KIND,
  API_GROUP,
  API_GROUP_VERSION,
  applyDefaults,
  kindDefinition,
  LLM_PROVIDERS,
  LLMMODEL_DEFAULTS,
  LLMMODEL_DEFINITION,
  llmModelProviderName,
  PASSTHROUGHMODEL_DEFINITION,
  passthroughBackendType,
  passthroughCredentialType,
  rootSchema,
} from '../../../src/api';
import type {
  AgentDeployment,
  AgentDeploymentSpec,
  JsonSchema,
  KindDefinition,
  LLMModel,
  LLMModelSpec,
  PassthroughModel,
  PassthroughModelSpec,
} from '../../../src/api';
import { examples, schemaAt } from './schema-helpers';

/** ajv over the CRD schema: the x-kubernetes-* keywords and k8s formats are not JSON Schema. */
function validator(def: KindDefinition, version: 'v1alpha1' | 'v1beta1' = 'v1alpha1') {
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  return ajv.compile(rootSchema(version === 'v1alpha1' ? def.schema : kindDefinition(def.kind)!.v1beta1Schema!));
}

describe('types and schema agree', () => {
  // Written against the static types: if a name or a shape drifts from the schema, tsc fails here
  // and ajv (reading the CRD schema) fails below.
  const llm: LLMModel = {
    apiVersion: API_GROUP_VERSION,
    kind: 'LLMModel',
    metadata: { name: 'typed', namespace: 'ns' },
    spec: {
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface', storage: { type: 'pvc', size: '40Gi' } },
      provider: { name: 'kaito', overrides: { resource: { instanceType: 'Standard_NC24ads_A100_v4' } } },
      resources: { gpu: { count: 1, type: 'nvidia' }, requests: { cpu: '4', memory: '16Gi' } },
      serving: { replicas: 1, vllmArgs: ['--max-model-len=8192'], updateStrategy: 'Recreate' },
      access: { public: true },
      endpoints: { external: { enabled: true, subdomain: 'qwen' }, requestTimeout: '600s' },
    },
    status: {
      phase: 'Ready',
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Serving', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
      provider: { name: 'kaito', resourceKind: 'Workspace', resourceName: 'typed' },
      replicas: { ready: 1, desired: 1 },
    },
  };
  const ptm: PassthroughModel = {
    apiVersion: API_GROUP_VERSION,
    kind: 'PassthroughModel',
    metadata: { name: 'typed' },
    spec: {
      provider: { backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } }, credential: { type: 'WorkloadIdentity' }, port: 443 },
      models: { declared: ['amazon.nova-pro-v1:0'] },
      access: { groups: ['a'] },
    },
    status: { phase: 'Ready', provider: { backendType: 'Bedrock', hostname: 'bedrock-runtime.us-east-1.amazonaws.com', port: 443 } },
  };
  const agent: AgentDeployment = {
    apiVersion: API_GROUP_VERSION,
    kind: 'AgentDeployment',
    metadata: { name: 'typed' },
    spec: {
      image: 'registry.example.com/agent:1',
      lifecycle: 'deployment',
      model: { externalAPI: { type: 'openai', baseURL: 'https://api.openai.com/v1', modelName: 'gpt-4.1', credentialsRef: { name: 's', key: 'apiKey' } } },
      resources: { limits: { memory: '1Gi' } },
      observability: { otlp: { endpoint: 'http://otel:4317', protocol: 'grpc' } },
    },
    status: { phase: 'Running', modelBinding: { bindingMode: 'externalAPI', modelName: 'gpt-4.1' }, replicas: { desired: 1, ready: 1, available: 1 } },
  };

  it.each<[string, KindDefinition, unknown]>([
    ['LLMModel', LLMMODEL_DEFINITION, llm],
    ['PassthroughModel', PASSTHROUGHMODEL_DEFINITION, ptm],
    ['AgentDeployment', AGENTDEPLOYMENT_DEFINITION, agent],
  ])('a typed %s satisfies the CRD schema', (_kind, def, obj) => {
    const validate = validator(def);
    expect(validate(obj) ? [] : validate.errors).toEqual([]);
  });

  it('the spec and status fields of the types are the properties of the schemas', () => {
    // Exact<A, B> is `true` only when the two unions are equal, so a field added to the schema
    // but missing here (or the reverse) fails the type check as well as the assertion.
    type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
    const llmSpec = ['model', 'provider', 'resources', 'serving', 'access', 'endpoints', 'advanced'] as const;
    const ptmSpec = ['provider', 'models', 'access', 'endpoints'] as const;
    const agentSpec = ['framework', 'provider', 'image', 'command', 'args', 'env', 'port', 'lifecycle', 'replicas', 'model', 'config', 'resources', 'observability'] as const;
    const llmStatus = ['phase', 'conditions', 'observedGeneration', 'modelSize', 'replicas', 'endpoints', 'provider'] as const;
    const checks: [
      Exact<(typeof llmSpec)[number], keyof LLMModelSpec>,
      Exact<(typeof ptmSpec)[number], keyof PassthroughModelSpec>,
      Exact<(typeof agentSpec)[number], keyof AgentDeploymentSpec>,
      Exact<(typeof llmStatus)[number], keyof NonNullable<LLMModel['status']>>,
    ] = [true, true, true, true];
    expect(checks).toEqual([true, true, true, true]);
    const keys = (def: KindDefinition, at: string) => Object.keys(schemaAt(rootSchema(def.schema), at)?.properties as object);
    expect(keys(LLMMODEL_DEFINITION, 'spec')).toEqual([...llmSpec]);
    expect(keys(PASSTHROUGHMODEL_DEFINITION, 'spec')).toEqual([...ptmSpec]);
    expect(keys(AGENTDEPLOYMENT_DEFINITION, 'spec')).toEqual([...agentSpec]);
    expect(keys(LLMMODEL_DEFINITION, 'status')).toEqual([...llmStatus]);
  });

  it('the schema refuses what the types forbid: an unknown provider and a missing required field', () => {
    const validate = validator(LLMMODEL_DEFINITION);
    expect(validate({ ...llm, spec: { ...llm.spec, provider: { name: 'ollama' } } })).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe('/spec/provider/name');
    const { access: _access, ...withoutAccess } = llm.spec;
    expect(validate({ ...llm, spec: withoutAccess })).toBe(false);
    expect(validate.errors?.[0]?.params).toEqual({ missingProperty: 'access' });
  });

  it('the provider enum of the schema is the provider list of the type', () => {
    expect(schemaAt(rootSchema(LLMMODEL_DEFINITION.schema), 'spec.provider.name')?.enum).toEqual([...LLM_PROVIDERS]);
  });

  it('finds each kind by name', () => {
    expect(kindDefinition(AGENTDEPLOYMENT_KIND)).toEqual({ ...AGENTDEPLOYMENT_DEFINITION, v1beta1Schema: AgentDeploymentV1beta1Schema });
    expect(kindDefinition('Deployment')).toBeUndefined();
  });
});

describe.each<[string, 'llmmodel' | 'passthroughmodel' | 'agentdeployment', KindDefinition]>([
  ['LLMModel', 'llmmodel', LLMMODEL_DEFINITION],
  ['PassthroughModel', 'passthroughmodel', PASSTHROUGHMODEL_DEFINITION],
  ['AgentDeployment', 'agentdeployment', AGENTDEPLOYMENT_DEFINITION],
])('%s examples', (kind, dir, def) => {
  describe.each(['v1beta1', 'v1alpha1'] as const)('%s', (version) => {
    const files = examples(dir, version);
    const validate = validator(def, version);

    it('exist', () => {
      expect(files.length).toBeGreaterThan(0);
    });

    it.each(files.map((e) => [e.file, e] as const))('%s is a valid %s', (_file, example) => {
      expect(example.object.kind).toBe(kind);
      expect(example.object.apiVersion).toBe(`${API_GROUP}/${version}`);
      const defaulted = applyDefaults(rootSchema(version === 'v1alpha1' ? def.schema : kindDefinition(def.kind)!.v1beta1Schema!), example.object);
      expect(validate(defaulted) ? [] : validate.errors).toEqual([]);
    });
  });

  it('has the same example files in both versions', () => {
    const beta = examples(dir).map((e) => e.file.split('/').pop());
    expect(examples(dir, 'v1alpha1').map((e) => e.file.split('/').pop())).toEqual(beta);
  });
});

describe('examples cover every provider, backend and binding', () => {
  it('has an LLMModel per provider', () => {
    const providers = examples('llmmodel').map((e) => llmModelProviderName(e.object.spec as Pick<LLMModelSpec, 'provider'>));
    expect(new Set(providers)).toEqual(new Set(LLM_PROVIDERS));
  });

  it('has a PassthroughModel per backend type', () => {
    const backends = examples('passthroughmodel').map((e) => passthroughBackendType(e.object.spec as Pick<PassthroughModelSpec, 'provider'>));
    expect(new Set(backends)).toEqual(new Set(['OpenAI', 'Bedrock', 'Anthropic', 'AzureOpenAI']));
  });

  it('has AgentDeployments bound with modelRef and with externalAPI', () => {
    const modes = examples('agentdeployment').map((e) => Object.keys((e.object.spec as AgentDeploymentSpec).model)[0]);
    expect(new Set(modes)).toEqual(new Set(['modelRef', 'externalAPI']));
  });
});

describe('defaults', () => {
  const schema = rootSchema(LLMMODEL_DEFINITION.schema) as JsonSchema;

  it('fills the documented defaults into present objects and creates no missing parents', () => {
    const stored = applyDefaults(schema, {
      spec: { model: { name: 'm', source: 'huggingface', storage: {} }, resources: { gpu: { count: 0 } }, access: { public: true }, provider: {} },
    });
    expect(stored.spec).toEqual({
      model: { name: 'm', source: 'huggingface', storage: { type: LLMMODEL_DEFAULTS.storageType } },
      resources: { gpu: { count: 0, type: LLMMODEL_DEFAULTS.gpuType } },
      access: { public: true },
      provider: { name: LLMMODEL_DEFAULTS.providerName },
    });
  });

  it('does not change its input', () => {
    const input = { spec: { provider: {} } };
    applyDefaults(schema, input);
    expect(input).toEqual({ spec: { provider: {} } });
  });

  it('reads the effective provider, backend and credential of a spec', () => {
    expect(llmModelProviderName({})).toBe('vllm');
    expect(llmModelProviderName({ provider: { name: 'dynamo' } })).toBe('dynamo');
    expect(passthroughBackendType({ provider: {} })).toBe('OpenAI');
    expect(passthroughCredentialType({ provider: { backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } } } })).toBe('WorkloadIdentity');
    expect(passthroughCredentialType({ provider: { backend: { type: 'Anthropic' } } })).toBe('APIKey');
  });
});
