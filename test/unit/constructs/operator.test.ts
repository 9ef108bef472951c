import { find, render } from './fixtures';

const env = (d: ReturnType<typeof find>) => Object.fromEntries(d.spec.template.spec.containers[0].env.map((e: { name: string; value?: string }) => [e.name, e.value ?? 'fieldRef']));

describe('operator Deployment', () => {
  test('meets the restricted Pod Security profile', () => {
    const pod = find(render(), 'Deployment').spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0].securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.containers[0].livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(pod.containers[0].readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(pod.containers[0].resources.requests).toEqual({ cpu: '100m', memory: '128Mi' });
  });

  test('sets the process contract environment for the release', () => {
    const e = env(find(render(undefined, { releaseName: 'r1', namespace: 'ns1' }), 'Deployment'));
    expect(e).toMatchObject({
      POD_NAMESPACE: 'fieldRef',
      POD_NAME: 'fieldRef',
      NLS_RELEASE_NAME: 'r1',
      NLS_WEBHOOK_PORT: '9443',
      NLS_METRICS_PORT: '8080',
      NLS_HEALTH_PORT: '8081',
      NLS_CERT_MODE: 'self-managed',
      NLS_CERT_DIR: '/var/run/nebari-llm-serving/webhook-certs',
      NLS_WEBHOOK_SECRET: 'r1-webhook-server-cert',
      NLS_WEBHOOK_SERVICE: 'r1-nebari-llm-serving-webhook',
      NLS_VALIDATING_WEBHOOK_CONFIGURATIONS: 'r1-nebari-llm-serving-validating',
      NLS_MUTATING_WEBHOOK_CONFIGURATIONS: 'r1-nebari-llm-serving-mutating',
      NLS_LEADER_ELECTION: 'true',
      NLS_LOG_LEVEL: 'info',
    });
  });

  test('runs the compiled operator with an explicit command', () => {
    expect(find(render(), 'Deployment').spec.template.spec.containers[0].command).toEqual([
      '/nodejs/bin/node',
      '--max-semi-space-size=1',
      '--max-old-space-size-percentage=75',
      '--optimize-for-size',
      '/app/lib/src/operator/main.js',
    ]);
  });

  test('passes the provider values as environment, only when set (unset = built-in defaults)', () => {
    const defaults = env(find(render(), 'Deployment'));
    for (const name of ['NLS_VLLM_IMAGE', 'NLS_MODEL_DOWNLOADER_IMAGE', 'NLS_EPP_IMAGE', 'NLS_STORAGE_CLASS_NAME']) expect(defaults).not.toHaveProperty(name);
    const e = env(
      find(
        render((v) => {
          v.providers.vllm.image = 'r.example/vllm:1';
          v.providers.modelDownloader.image = 'r.example/dl:2';
          v.providers.endpointPicker.image = 'r.example/epp:3';
          v.providers.storageClassName = 'fast';
        }),
        'Deployment',
      ),
    );
    expect(e).toMatchObject({ NLS_VLLM_IMAGE: 'r.example/vllm:1', NLS_MODEL_DOWNLOADER_IMAGE: 'r.example/dl:2', NLS_EPP_IMAGE: 'r.example/epp:3', NLS_STORAGE_CLASS_NAME: 'fast' });
  });

  test('pulls by digest when one is given, else by tag defaulting to the chart version', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(find(render(), 'Deployment').spec.template.spec.containers[0].image).toBe('nebari/nebari-llm-serving:0.2.0');
    const d = find(render((v) => { v.operator.image.digest = digest; v.operator.image.tag = 'x'; }), 'Deployment');
    expect(d.spec.template.spec.containers[0].image).toBe(`nebari/nebari-llm-serving@${digest}`);
  });

  test('more than one replica forces leader election and adds a PodDisruptionBudget', () => {
    expect(render().some((o) => o.kind === 'PodDisruptionBudget')).toBe(false);
    const objects = render((v) => { v.operator.replicas = 3; v.operator.leaderElection = false; });
    expect(env(find(objects, 'Deployment')).NLS_LEADER_ELECTION).toBe('true');
    expect(find(objects, 'PodDisruptionBudget').spec.minAvailable).toBe(1);
    expect(env(find(render((v) => { v.operator.leaderElection = false; }), 'Deployment')).NLS_LEADER_ELECTION).toBe('false');
  });

  test('cert-manager mode mounts the certificate Secret; self-managed mode a writable emptyDir', () => {
    const vol = (objects: ReturnType<typeof render>) => find(objects, 'Deployment').spec.template.spec.volumes.find((x: { name: string }) => x.name === 'webhook-certs');
    expect(vol(render())).toEqual({ name: 'webhook-certs', emptyDir: { sizeLimit: '1Mi' } });
    expect(vol(render((v) => { v.webhook.certificates.mode = 'cert-manager'; }))).toEqual({ name: 'webhook-certs', secret: { secretName: 'nebari-llm-serving-webhook-server-cert' } });
  });

  test('gateway settings reach the operator as JSON, leaving empty settings to the translation defaults', () => {
    const ctx = JSON.parse(env(find(render((v) => { v.platform.baseDomain = 'example.com'; v.platform.external.sectionName = ''; }), 'Deployment')).NLS_GATEWAY_CONTEXT);
    expect(ctx.baseDomain).toBe('example.com');
    expect(ctx.external).toEqual({ gatewayName: 'nebari-gateway', gatewayNamespace: 'envoy-gateway-system', sectionName: '' });
    expect(ctx.jwt).toEqual({ groupsClaim: 'groups' });
  });

  test('an issuer without platform.jwt.audiences fails the build, naming the value and the opt-out (issue 29, Medium 9)', () => {
    const withIssuer = (v: Parameters<Parameters<typeof render>[0] & object>[0]) => {
      v.platform.baseDomain = 'example.com';
      v.platform.jwt.issuer = 'https://id.example.com/realms/nebari';
    };
    expect(() => render(withIssuer)).toThrow(
      "platform.jwt.issuer is set but platform.jwt.audiences is empty: the internal endpoint would accept a token the issuer minted for any of its clients, so another application's token could be replayed against the models; set the chart value platform.jwt.audiences to the client IDs whose tokens may call models (e.g. --set 'platform.jwt.audiences={nebari-llm}'), or accept the replay risk with platform.jwt.allowAnyAudience=true (docs/security.md)",
    );
    const audiences = JSON.parse(env(find(render((v) => { withIssuer(v); v.platform.jwt.audiences = ['nebari-llm']; }), 'Deployment')).NLS_GATEWAY_CONTEXT);
    expect(audiences.jwt).toEqual({ issuer: 'https://id.example.com/realms/nebari', audiences: ['nebari-llm'], groupsClaim: 'groups' });
    const any = JSON.parse(env(find(render((v) => { withIssuer(v); v.platform.jwt.allowAnyAudience = true; }), 'Deployment')).NLS_GATEWAY_CONTEXT);
    expect(any.jwt).toEqual({ issuer: 'https://id.example.com/realms/nebari', allowAnyAudience: true, groupsClaim: 'groups' });
  });

  test('host names in the gateway settings are lower-cased with one trailing root dot removed', () => {
    const ctx = JSON.parse(env(find(render((v) => { v.platform.baseDomain = 'Example.COM.'; v.platform.external.hostname = 'API.Example.com.'; v.platform.internal.hostname = 'Internal.Example.com'; }), 'Deployment')).NLS_GATEWAY_CONTEXT);
    expect([ctx.baseDomain, ctx.external.hostname, ctx.internal.hostname]).toEqual(['example.com', 'api.example.com', 'internal.example.com']);
  });

  test('optional pod settings appear only when set', () => {
    const plain = find(render(), 'Deployment').spec.template.spec;
    expect(plain).not.toHaveProperty('imagePullSecrets');
    expect(plain).not.toHaveProperty('priorityClassName');
    const set = find(render((v) => { v.imagePullSecrets = [{ name: 'regcred' }]; v.operator.priorityClassName = 'high'; v.operator.nodeSelector = { a: 'b' }; }), 'Deployment').spec.template.spec;
    expect(set).toMatchObject({ imagePullSecrets: [{ name: 'regcred' }], priorityClassName: 'high', nodeSelector: { a: 'b' } });
  });

  test('passes the quota settings (NLS_QUOTAS) only while a rate-limit backend is named, and refuses a default tier that is not listed', () => {
    expect(env(find(render(), 'Deployment'))).not.toHaveProperty('NLS_QUOTAS');
    const on = env(
      find(
        render((v) => {
          v.quotas.rateLimitBackend = 'redis://redis:6379';
          v.quotas.tiers = [{ name: 'standard', tokens: 1000, unit: 'Hour', requestsPerMinute: 10, description: 'Small' }];
        }),
        'Deployment',
        '-operator',
      ),
    );
    expect(on.NLS_QUOTAS).toBe('{"costType":"TotalToken","defaultTier":"standard","tiers":[{"description":"Small","name":"standard","requestsPerMinute":10,"tokens":1000,"unit":"Hour"}]}');
    expect(() =>
      render((v) => {
        v.quotas.rateLimitBackend = 'redis://redis:6379';
        v.quotas.defaultTier = 'gold';
      }),
    ).toThrow('quotas.defaultTier "gold" is not one of quotas.tiers (standard); set it to one of their names');
  });
});
