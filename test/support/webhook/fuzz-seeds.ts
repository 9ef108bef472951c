// The objects webhook-fuzz.test.ts mutates, shared with the admission differential test (which
// sends them through the API server and the offline admission unchanged).

/** One object of each kind, each with something a rule warns about or refuses. */
export function fuzzSeeds(namespace: string): Record<string, unknown>[] {
  return [
    {
      apiVersion: 'llm.nebari.dev/v1alpha1',
      kind: 'LLMModel',
      metadata: { name: 'fuzz', namespace },
      spec: { model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface', storage: { type: 'emptyDir' }, preload: true }, resources: { gpu: { count: 2 } }, access: { public: true, groups: ['a'] } },
    },
    {
      apiVersion: 'llm.nebari.dev/v1alpha1',
      kind: 'PassthroughModel',
      metadata: { name: 'fuzz', namespace },
      spec: { provider: { hostname: 'API.OpenAI.com.', credentialSecretName: 'k', backend: { type: 'OpenAI' } }, models: { declared: ['a', 'a'] }, access: { groups: ['x'] } },
    },
    {
      apiVersion: 'llm.nebari.dev/v1alpha1',
      kind: 'AgentDeployment',
      metadata: { name: 'fuzz', namespace },
      spec: {
        image: 'x',
        env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
        model: { externalAPI: { type: 'openai', baseURL: 'https://api.openai.com/v1', modelName: 'm', credentialsRef: { name: 'c' } }, modelRef: { kind: 'LLMModel', name: 'fuzz' } },
      },
    },
  ];
}
