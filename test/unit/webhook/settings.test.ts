import { webhookSettingsFromEnv } from '../../../src/webhook/settings';

describe('webhook settings from the environment', () => {
  it('applies the documented defaults', () => {
    expect(webhookSettingsFromEnv({ POD_NAMESPACE: 'sys', NLS_RELEASE_NAME: 'llm' })).toEqual({
      namespace: 'sys',
      port: 9443,
      certMode: 'self-managed',
      certDir: '/var/run/nebari-llm-serving/webhook-certs',
      secretName: 'llm-webhook-server-cert',
      serviceName: 'llm-webhook',
      webhookConfigurations: { validating: [], mutating: [] },
      conversionCrds: [],
      logLevel: 'info',
      agentNamespaces: ['sys'],
      allowedImages: [],
    });
  });

  it('reads the image allow-list and refuses entries that cannot be image prefixes', () => {
    expect(webhookSettingsFromEnv({ POD_NAMESPACE: 'sys', NLS_ALLOWED_IMAGES: 'registry.example.com/, vllm/vllm-openai:' }).allowedImages).toEqual(['registry.example.com/', 'vllm/vllm-openai:']);
    expect(() => webhookSettingsFromEnv({ POD_NAMESPACE: 'sys', NLS_ALLOWED_IMAGES: 'registry example/' })).toThrow('NLS_ALLOWED_IMAGES: "registry example/" is not an image prefix or reference');
  });

  it('admits agents in the release namespace plus NLS_WATCH_NAMESPACES, each once', () => {
    expect(webhookSettingsFromEnv({ POD_NAMESPACE: 'sys', NLS_WATCH_NAMESPACES: 'team-a, sys,team-b,team-a,' }).agentNamespaces).toEqual(['sys', 'team-a', 'team-b']);
  });

  it('reads every variable of the contract', () => {
    const settings = webhookSettingsFromEnv({
      POD_NAMESPACE: 'sys',
      NLS_WEBHOOK_PORT: '8443',
      NLS_CERT_MODE: 'cert-manager',
      NLS_CERT_DIR: '/certs',
      NLS_WEBHOOK_SECRET: 's',
      NLS_WEBHOOK_SERVICE: 'svc',
      NLS_VALIDATING_WEBHOOK_CONFIGURATIONS: ' a, b ,,',
      NLS_MUTATING_WEBHOOK_CONFIGURATIONS: 'c',
      NLS_CONVERSION_CRDS: 'llmmodels.llm.nebari.dev, agentdeployments.llm.nebari.dev',
      NLS_LOG_LEVEL: 'debug',
    });
    expect(settings).toMatchObject({
      port: 8443,
      certMode: 'cert-manager',
      certDir: '/certs',
      secretName: 's',
      serviceName: 'svc',
      webhookConfigurations: { validating: ['a', 'b'], mutating: ['c'] },
      conversionCrds: ['llmmodels.llm.nebari.dev', 'agentdeployments.llm.nebari.dev'],
    });
  });

  it.each([
    [{}, 'POD_NAMESPACE is not set; set it from the downward API'],
    [{ POD_NAMESPACE: 'x', NLS_WEBHOOK_PORT: 'https' }, 'NLS_WEBHOOK_PORT is "https"; set it to a TCP port'],
    [{ POD_NAMESPACE: 'x', NLS_CERT_MODE: 'manual' }, 'NLS_CERT_MODE is "manual"; set it to self-managed or cert-manager'],
  ])('names the variable and the fix (%j)', (env, message) => {
    expect(() => webhookSettingsFromEnv(env)).toThrow(message);
  });
});
