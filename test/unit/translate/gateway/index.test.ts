import { desiredGatewayObjects, gatewayTeardown } from '../../../../src/translate/gateway';
import { ANNOTATION_APPLIED_DIGEST, withAppliedDigest } from '../../../../src/translate/applied-digest';
import { caseContext, llmModel, matrixContext, modelMatrix, passthroughModel } from './model-matrix';

const context = { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] } };
/** With no quotas and no retries, every translation removes endpoint traffic policies left from before. */
const staleTrafficPolicies = (model: string) =>
  [`${model}-external-quota`, `${model}-internal-traffic`].map((name) => ({
    action: 'delete',
    object: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'BackendTrafficPolicy', namespace: 'models', name },
    reason: 'no retries, fallback or quotas to enforce',
  }));

const labels = (kind: string, endpoint?: string, name = 'openai') => ({
  'app.kubernetes.io/component': 'gateway',
  'app.kubernetes.io/managed-by': 'nebari-llm-serving',
  'app.kubernetes.io/name': 'nebari-llm-serving',
  'app.kubernetes.io/part-of': 'nebari-llm-serving',
  ...(endpoint ? { 'llm.nebari.dev/endpoint': endpoint } : {}),
  'llm.nebari.dev/model': name,
  'llm.nebari.dev/model-kind': kind,
});

describe('PassthroughModel (OpenAI-compatible, legacy schemaVersion)', () => {
  const model = passthroughModel('openai', {
    provider: { hostname: 'OpenRouter.ai.', pathPrefix: '/api/v1', credential: { secretRef: { name: 'or-key' } } },
    models: { declared: ['openai/gpt-4o'], catchAll: true },
    access: { groups: ['ml'] },
  });
  const { objects, deletions, errors } = desiredGatewayObjects(model, { ...context, apiKeyClientIDs: ['c1'] });
  const owner = [{ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', name: 'openai', uid: model.metadata.uid, controller: true, blockOwnerDeletion: true }];
  const meta = (name: string, endpoint?: string) => ({ name, namespace: 'models', labels: labels('PassthroughModel', endpoint), ownerReferences: owner });

  test('no errors, and nothing to delete but a quota policy left from when quotas were on', () => {
    expect(errors).toEqual([]);
    expect(deletions).toEqual(staleTrafficPolicies('openai'));
  });

  test('objects in apply order: backends, then each endpoint policy before its route', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Backend/openai-backend',
      'BackendTLSPolicy/openai-backend-tls',
      'AIServiceBackend/openai',
      'BackendSecurityPolicy/openai-upstream-auth',
      'SecurityPolicy/openai-external-auth',
      'AIGatewayRoute/openai-external',
      'SecurityPolicy/openai-internal-auth',
      'AIGatewayRoute/openai-internal',
    ]);
  });

  test('upstream objects', () => {
    expect(objects.slice(0, 4)).toEqual(([
      {
        apiVersion: 'gateway.envoyproxy.io/v1alpha1',
        kind: 'Backend',
        metadata: meta('openai-backend'),
        spec: { type: 'Endpoints', endpoints: [{ fqdn: { hostname: 'openrouter.ai', port: 443 } }] },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'BackendTLSPolicy',
        metadata: meta('openai-backend-tls'),
        spec: {
          targetRefs: [{ group: 'gateway.envoyproxy.io', kind: 'Backend', name: 'openai-backend' }],
          validation: { hostname: 'openrouter.ai', wellKnownCACertificates: 'System' },
        },
      },
      {
        apiVersion: 'aigateway.envoyproxy.io/v1beta1',
        kind: 'AIServiceBackend',
        metadata: meta('openai'),
        spec: {
          schema: { name: 'OpenAI', prefix: '/api/v1' },
          backendRef: { group: 'gateway.envoyproxy.io', kind: 'Backend', name: 'openai-backend' },
          headerMutation: { remove: ['x-llm-client-id'] },
        },
      },
      {
        apiVersion: 'aigateway.envoyproxy.io/v1beta1',
        kind: 'BackendSecurityPolicy',
        metadata: meta('openai-upstream-auth'),
        spec: {
          targetRefs: [{ group: 'aigateway.envoyproxy.io', kind: 'AIServiceBackend', name: 'openai' }],
          type: 'APIKey',
          apiKey: { secretRef: { group: '', kind: 'Secret', name: 'or-key' } },
        },
      },
    ] as unknown as Parameters<typeof withAppliedDigest>[0][]).map(withAppliedDigest));
  });

  test('each route declares one host name, its own endpoint, with the declared model and the catch-all', () => {
    const routes = objects.filter((o) => o.kind === 'AIGatewayRoute');
    // The digest annotation is the body's (test 'the digest annotation' below).
    expect(routes.map(({ metadata: { annotations: _digest, ...metadata } }) => metadata)).toEqual([meta('openai-external', 'external'), meta('openai-internal', 'internal')]);
    expect(routes.map((r) => (r.kind === 'AIGatewayRoute' ? r.spec.hostnames : []))).toEqual([['llm.example.com'], ['llm-internal.example.com']]);
    const external = routes[0];
    expect(external.kind === 'AIGatewayRoute' && external.spec).toEqual({
      parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'nebari-gateway', namespace: 'envoy-gateway-system', sectionName: 'llm-https' }],
      hostnames: ['llm.example.com'],
      rules: [
        {
          name: 'models',
          matches: [{ headers: [{ type: 'Exact', name: 'x-ai-eg-model', value: 'openai/gpt-4o' }] }],
          backendRefs: [{ name: 'openai', weight: 1, priority: 0 }],
          timeouts: { request: '120s' },
          modelsOwnedBy: 'openrouter.ai',
        },
        {
          name: 'catch-all',
          matches: [{ headers: [{ type: 'RegularExpression', name: 'x-ai-eg-model', value: '.+' }] }],
          backendRefs: [{ name: 'openai', weight: 1, priority: 0 }],
          timeouts: { request: '120s' },
          modelsOwnedBy: 'openrouter.ai',
        },
      ],
    });
    const internal = routes[1];
    expect(internal.kind === 'AIGatewayRoute' && internal.spec.parentRefs).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'nebari-internal-gateway', namespace: 'envoy-gateway-system', sectionName: 'llm-internal-https' },
    ]);
  });
});

describe('PassthroughModel with the platform\'s provider CA ConfigMap', () => {
  const model = passthroughModel('openai', { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'openai-key' } } }, models: { declared: ['gpt-4o'] } });
  const policy = (providerTLS?: { caConfigMap?: string }) =>
    desiredGatewayObjects(model, { ...context, ...(providerTLS ? { providerTLS } : {}) }).objects.find((o) => o.kind === 'BackendTLSPolicy');

  test('the BackendTLSPolicy verifies the provider against the ConfigMap\'s CAs instead of the system CAs', () => {
    expect(policy({ caConfigMap: 'provider-ca' })?.spec).toEqual({
      targetRefs: [{ group: 'gateway.envoyproxy.io', kind: 'Backend', name: 'openai-backend' }],
      validation: { hostname: 'api.openai.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'provider-ca' }] },
    });
  });

  test('without one (or empty), the system CAs', () => {
    for (const settings of [undefined, {}, { caConfigMap: '' }]) {
      expect(policy(settings)?.spec).toMatchObject({ validation: { hostname: 'api.openai.com', wellKnownCACertificates: 'System' } });
      expect(JSON.stringify(policy(settings))).not.toContain('caCertificateRefs');
    }
  });

  test('an invalid name is an error naming the chart value', () => {
    const { objects, errors } = desiredGatewayObjects(model, { ...context, providerTLS: { caConfigMap: 'Provider CA' } });
    expect(objects).toEqual([]);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/^platform\.providerTLS\.caConfigMap: "Provider CA" is not a ConfigMap name/)]);
  });
});

describe('LLMModel', () => {
  const model = llmModel('llama', { endpoints: { requestTimeout: '15m' } });
  const { objects, errors } = desiredGatewayObjects(model, context);

  test('InferencePool over the serving pods, then policies and routes to it', () => {
    expect(errors).toEqual([]);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'InferencePool/llama',
      'SecurityPolicy/llama-external-auth',
      'AIGatewayRoute/llama-external',
      'SecurityPolicy/llama-internal-auth',
      'AIGatewayRoute/llama-internal',
    ]);
    expect(objects[0]).toEqual(withAppliedDigest({
      apiVersion: 'inference.networking.k8s.io/v1',
      kind: 'InferencePool',
      metadata: {
        name: 'llama',
        namespace: 'models',
        labels: labels('LLMModel', undefined, 'llama'),
        ownerReferences: [{ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', name: 'llama', uid: model.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: {
        selector: { matchLabels: { 'llm.nebari.dev/model': 'llama', 'llm.nebari.dev/role': 'serving' } },
        targetPorts: [{ number: 8000 }],
        endpointPickerRef: { group: '', kind: 'Service', name: 'llama-epp', port: { number: 9002 }, failureMode: 'FailClose' },
      },
    }));
  });

  test('routes match spec.model.name, use the InferencePool and the spec timeout', () => {
    const route = objects[2];
    expect(route.kind === 'AIGatewayRoute' && route.spec.rules).toEqual([
      {
        name: 'models',
        matches: [{ headers: [{ type: 'Exact', name: 'x-ai-eg-model', value: 'meta-llama/Llama-3.1-8B-Instruct' }] }],
        backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llama', weight: 1, priority: 0 }],
        timeouts: { request: '15m' },
        modelsOwnedBy: 'nebari-llm-serving',
      },
    ]);
  });

  test('the default timeout is 600s and the provider can supply the serving pods', () => {
    const { objects: o } = desiredGatewayObjects(llmModel('k'), { ...context, servingPool: { selector: { 'kaito.sh/workspace': 'k' }, targetPort: 5000 } });
    const route = o.find((x) => x.kind === 'AIGatewayRoute');
    expect(route?.kind === 'AIGatewayRoute' && route.spec.rules[0].timeouts).toEqual({ request: '600s' });
    const pool = o[0];
    expect(pool.kind === 'InferencePool' && [pool.spec.selector, pool.spec.targetPorts]).toEqual([{ matchLabels: { 'kaito.sh/workspace': 'k' } }, [{ number: 5000 }]]);
  });
});

describe('endpoints on and off', () => {
  test('disabling the external endpoint: its route goes, then (after the HTTPRoute) its policy; keys stay', () => {
    const model = passthroughModel('openai', { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'k' } } }, endpoints: { external: { enabled: false } } });
    const { objects, deletions } = desiredGatewayObjects(model, context);
    expect(objects.map((o) => o.kind + '/' + o.metadata.name).filter((n) => n.includes('external'))).toEqual([]);
    expect(objects.filter((o) => o.kind === 'AIGatewayRoute').map((o) => o.metadata.name)).toEqual(['openai-internal']);
    expect(deletions).toEqual([
      ...staleTrafficPolicies('openai'),
      {
        action: 'delete',
        object: { apiVersion: 'aigateway.envoyproxy.io/v1beta1', kind: 'AIGatewayRoute', namespace: 'models', name: 'openai-external' },
        propagationPolicy: 'Foreground',
        reason: 'endpoint disabled: the external route and its catalog entries go first',
      },
      {
        action: 'awaitAbsence',
        object: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace: 'models', name: 'openai-external' },
        reason: 'endpoint disabled: the external auth policy must outlive the HTTPRoute generated from the route',
      },
      {
        action: 'delete',
        object: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy', namespace: 'models', name: 'openai-external-auth' },
        reason: 'endpoint disabled: the external generated HTTPRoute is gone, so its auth policy can go',
      },
    ]);
    expect(deletions.some((d) => d.object.kind === 'Secret')).toBe(false);
  });

  test('disabling the internal endpoint needs no issuer and deletes only internal objects', () => {
    const model = llmModel('llama', { endpoints: { internal: { enabled: false } } });
    const { objects, deletions, errors } = desiredGatewayObjects(model, { baseDomain: 'example.com' });
    expect(errors).toEqual([]);
    expect(objects.map((o) => o.metadata.name)).toEqual(['llama', 'llama-external-auth', 'llama-external']);
    expect(deletions.map((d) => `${d.action} ${d.object.kind}/${d.object.name}`)).toEqual([
      'delete BackendTrafficPolicy/llama-external-quota',
      'delete BackendTrafficPolicy/llama-internal-traffic',
      'delete AIGatewayRoute/llama-internal',
      'awaitAbsence HTTPRoute/llama-internal',
      'delete SecurityPolicy/llama-internal-auth',
    ]);
  });

  test('re-enabling brings the route and policy back and deletes nothing of theirs', () => {
    const model = llmModel('llama', { endpoints: { internal: { enabled: true }, external: { enabled: true } } });
    const { objects, deletions } = desiredGatewayObjects(model, context);
    expect(objects.filter((o) => o.kind === 'AIGatewayRoute')).toHaveLength(2);
    expect(deletions).toEqual(staleTrafficPolicies('llama'));
  });

  test('teardown on model deletion: all routes, both waits, then policies, then backends', () => {
    const steps = gatewayTeardown(passthroughModel('openai', { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'k' } } } }));
    expect(steps.map((d) => `${d.action} ${d.object.kind}/${d.object.name}`)).toEqual([
      'delete BackendTrafficPolicy/openai-external-quota',
      'delete BackendTrafficPolicy/openai-internal-traffic',
      'delete AIGatewayRoute/openai-external',
      'awaitAbsence HTTPRoute/openai-external',
      'delete AIGatewayRoute/openai-internal',
      'awaitAbsence HTTPRoute/openai-internal',
      'delete SecurityPolicy/openai-external-auth',
      'delete SecurityPolicy/openai-internal-auth',
      'delete BackendSecurityPolicy/openai-upstream-auth',
      'delete AIServiceBackend/openai',
      'delete BackendTLSPolicy/openai-backend-tls',
      'delete Backend/openai-backend',
    ]);
    expect(gatewayTeardown(llmModel('llama')).at(-1)?.object).toEqual({ apiVersion: 'inference.networking.k8s.io/v1', kind: 'InferencePool', namespace: 'models', name: 'llama' });
  });
});

describe('errors are values: no objects, no deletions, every message names its field', () => {
  test.each([
    ['bad hostname', passthroughModel('p', { provider: { hostname: 'https://api.openai.com/v1', credential: { secretRef: { name: 'k' } } } }), context, ['spec.provider.hostname']],
    ['both endpoints off', passthroughModel('p', { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'k' } } }, endpoints: { external: { enabled: false }, internal: { enabled: false } } }), context, ['spec.endpoints']],
    ['nobody may call', llmModel('l', { access: {} }), context, ['spec.access']],
    ['internal endpoint without issuer', llmModel('l'), { baseDomain: 'example.com' }, ['spec.endpoints.internal.enabled']],
    ['bad timeout', llmModel('l', { endpoints: { requestTimeout: '10 minutes' } }), context, ['spec.endpoints.requestTimeout']],
    ['no models', passthroughModel('p', { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'k' } } }, models: {} }), context, ['spec.models']],
    ['bad base domain', llmModel('l'), { ...context, baseDomain: 'Example_Domain' }, ['platform.baseDomain', 'platform.baseDomain']],
    ['bad issuer', llmModel('l'), { baseDomain: 'example.com', jwt: { issuer: 'http://insecure', audiences: ['nebari-llm'] } }, ['platform.jwt.issuer', 'platform.jwt.jwksUri']],
    ['internal endpoint accepting tokens of any audience', llmModel('l'), { baseDomain: 'example.com', jwt: { issuer: 'https://id.example.com' } }, ['platform.jwt.audiences']],
    ['no namespace', { ...llmModel('l'), metadata: { name: 'l' } }, context, ['metadata.namespace']],
  ] as const)('%s', (_why, model, ctx, fields) => {
    const result = desiredGatewayObjects(model, ctx);
    expect(result.objects).toEqual([]);
    expect(result.deletions).toEqual([]);
    expect(result.errors.map((e) => e.field)).toEqual(fields);
    for (const e of result.errors) expect(e.message.startsWith(`${e.field}: `)).toBe(true);
  });

  test('an internal endpoint needs platform.jwt.audiences or the explicit allowAnyAudience (issue 29, Medium 9)', () => {
    const issuerOnly = { baseDomain: 'example.com', jwt: { issuer: 'https://id.example.com' } };
    const [error] = desiredGatewayObjects(llmModel('l'), issuerOnly).errors;
    expect(error.message).toBe(
      "platform.jwt.audiences: is empty, so the internal endpoint would accept a token the issuer minted for any of its clients (another application's token could be replayed against the model); set the chart value platform.jwt.audiences to the client IDs whose tokens may call models (e.g. --set 'platform.jwt.audiences={nebari-llm}'), or accept the replay risk with platform.jwt.allowAnyAudience=true (docs/security.md), or set spec.endpoints.internal.enabled: false",
    );
    expect(desiredGatewayObjects(llmModel('l'), { ...issuerOnly, jwt: { ...issuerOnly.jwt, allowAnyAudience: true } }).errors).toEqual([]);
    // A model only on the external endpoint takes no OIDC tokens.
    expect(desiredGatewayObjects(llmModel('l', { endpoints: { internal: { enabled: false } } }), issuerOnly).errors).toEqual([]);
  });

  test('the stored spec is not rewritten', () => {
    const model = passthroughModel('p', { provider: { hostname: 'API.OpenAI.com.', credential: { secretRef: { name: 'k' } } } });
    const before = JSON.stringify(model);
    desiredGatewayObjects(model, context);
    expect(JSON.stringify(model)).toBe(before);
  });
});

describe('the whole matrix', () => {
  const results = modelMatrix.map((c) => ({ ...c, result: desiredGatewayObjects(c.model, caseContext(c)) }));

  test('has at least 25 cases and every one translates', () => {
    expect(results.length).toBeGreaterThanOrEqual(25);
    for (const r of results) expect([r.why, r.result.errors]).toEqual([r.why, []]);
  });

  test('every route declares exactly one host name: its endpoint one', () => {
    for (const { result } of results) {
      for (const o of result.objects) {
        if (o.kind !== 'AIGatewayRoute') continue;
        expect(o.spec.hostnames).toEqual([o.metadata.labels['llm.nebari.dev/endpoint'] === 'external' ? 'llm.example.com' : 'llm-internal.example.com']);
      }
    }
  });

  test('every name fits in 63 characters and every object is owned by its model', () => {
    for (const { model, result } of results) {
      for (const o of result.objects) {
        expect(o.metadata.name.length).toBeLessThanOrEqual(63);
        expect(o.metadata.namespace).toBe(model.metadata.namespace);
        expect(o.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: model.metadata.uid, controller: true, blockOwnerDeletion: true })]);
        for (const v of Object.values(o.metadata.labels)) expect(v.length).toBeLessThanOrEqual(63);
      }
    }
  });

  test('nothing references another namespace except the parentRefs to the shared Gateways (a quota cost names a metadata namespace)', () => {
    const namespaced = (value: unknown, at: string, out: string[]) => {
      if (Array.isArray(value)) value.forEach((v, i) => namespaced(v, `${at}[${i}]`, out));
      else if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (k === 'namespace') out.push(at);
          namespaced(v, `${at}.${k}`, out);
        }
      }
      return out;
    };
    for (const { result } of results) {
      for (const o of result.objects) {
        for (const at of namespaced(o.spec, 'spec', [])) expect(`${o.kind} ${at}`).toMatch(/^(AIGatewayRoute spec\.parentRefs\[0\]|BackendTrafficPolicy spec\.rateLimit\.global\.rules\[\d+\]\.cost\.response\.metadata)$/);
      }
    }
  });

  test('the client-ID header (it names the key\'s user) is removed before every third-party provider, and kept for in-cluster models', () => {
    for (const { why, model, result } of results) {
      const backends = result.objects.filter((o) => o.kind === 'AIServiceBackend');
      if (model.kind === 'PassthroughModel') {
        expect([why, backends.map((b) => b.kind === 'AIServiceBackend' && b.spec.headerMutation)]).toEqual([why, [{ remove: ['x-llm-client-id'] }]]);
      } else {
        // An LLMModel's route goes to its InferencePool: the vLLM pods may read the header.
        expect([why, backends]).toEqual([why, []]);
        expect(JSON.stringify(result.objects)).not.toContain('"remove"');
      }
    }
  });

  test('the header removed is the one the API-key check forwards, when the platform names another', () => {
    const model = modelMatrix.find((c) => c.model.kind === 'PassthroughModel')!.model;
    const { objects } = desiredGatewayObjects(model, { ...matrixContext, clientIDHeader: 'X-Team-Client' });
    const backend = objects.find((o) => o.kind === 'AIServiceBackend');
    const policy = objects.find((o) => o.kind === 'SecurityPolicy' && o.spec.apiKeyAuth);
    expect(backend?.kind === 'AIServiceBackend' && backend.spec.headerMutation).toEqual({ remove: ['x-team-client'] });
    expect(policy?.kind === 'SecurityPolicy' && policy.spec.apiKeyAuth?.forwardClientIDHeader).toBe('X-Team-Client');
  });

  test('deterministic: the same input renders byte-identical JSON, and label keys are sorted', () => {
    const again = modelMatrix.map((c) => desiredGatewayObjects(structuredClone(c.model), structuredClone(caseContext(c))));
    expect(JSON.stringify(again)).toBe(JSON.stringify(results.map((r) => r.result)));
    for (const { result } of results) {
      for (const o of result.objects) expect(Object.keys(o.metadata.labels)).toEqual(Object.keys(o.metadata.labels).sort());
    }
  });

  test('a model without a uid (static synth) gets no owner reference, otherwise the same objects', () => {
    const model = llmModel('static');
    const withUid = desiredGatewayObjects(model, matrixContext).objects;
    const withoutUid = desiredGatewayObjects({ ...model, metadata: { name: 'static', namespace: 'models' } }, matrixContext).objects;
    expect(withoutUid.every((o) => o.metadata.ownerReferences === undefined)).toBe(true);
    expect(withoutUid.map((o) => o.spec)).toEqual(withUid.map((o) => o.spec));
  });
});

describe('the digest annotation', () => {
  const model = passthroughModel('digest', { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'k' } } } });
  const translate = (declared: string[]) => desiredGatewayObjects({ ...model, spec: { ...model.spec, models: { declared } } }, context).objects;

  it('is on every generated object: the SHA-256 of its body without the annotation, as the operator and a render apply it', () => {
    const objects = translate(['a']);
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) {
        const { [ANNOTATION_APPLIED_DIGEST]: digest, ...rest } = o.metadata.annotations ?? {};
      expect(digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(withAppliedDigest({ ...o, metadata: { ...o.metadata, annotations: Object.keys(rest).length ? rest : undefined } })).toEqual(o);
    }
  });

  it('changes with the body, and only with it', () => {
    const digests = (declared: string[]) => translate(declared).map((o) => `${o.kind}/${o.metadata.name} ${o.metadata.annotations?.[ANNOTATION_APPLIED_DIGEST]}`);
    expect(digests(['a'])).toEqual(digests(['a']));
    const changed = digests(['b']).filter((d) => !digests(['a']).includes(d));
    expect(changed.length).toBeGreaterThan(0);
  });
});
