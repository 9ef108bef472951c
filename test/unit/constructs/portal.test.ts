import { PORTAL_REQUIRED, portalRoleRules, portalQuotaTiersJson } from '../../../constructs/portal';
import { ChartValues } from '../../../src/chart/values-schema';
import { AnyObject, find, render } from './fixtures';

const enable = (v: ChartValues) => {
  v.platform.baseDomain = 'Example.COM.';
  v.platform.jwt.issuer = 'https://id.example.com/realms/nebari';
  v.platform.jwt.audiences = ['nebari-llm'];
  v.portal.enabled = true;
  v.portal.oidc.clientId = 'llm-keys';
};
const portalObjects = (objects: AnyObject[]) => objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'portal');
const env = (d: AnyObject) => Object.fromEntries(d.spec.template.spec.containers[0].env.map((e: AnyObject) => [e.name, e.value ?? e.valueFrom]));

describe('key portal', () => {
  test('is not rendered by default', () => {
    expect(portalObjects(render())).toEqual([]);
  });

  test('renders its own ServiceAccount, Role, RoleBinding, Deployment, Service, HTTPRoute and NetworkPolicy, and the admission policy on its writes', () => {
    const objects = portalObjects(render(enable, { releaseName: 'r1', namespace: 'ns1' }));
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'Deployment/r1-nebari-llm-serving-portal',
      'HTTPRoute/r1-nebari-llm-serving-portal',
      'NetworkPolicy/r1-nebari-llm-serving-portal',
      'Role/r1-nebari-llm-serving-portal',
      'RoleBinding/r1-nebari-llm-serving-portal',
      'RoleBinding/r1-nebari-llm-serving-portal-secrets',
      'Service/r1-nebari-llm-serving-portal',
      'ServiceAccount/r1-nebari-llm-serving-portal',
      'ValidatingAdmissionPolicy/r1-nebari-llm-serving-portal-writes',
      'ValidatingAdmissionPolicyBinding/r1-nebari-llm-serving-portal-writes',
    ]);
    // The policy is cluster-scoped (admission policies have no namespace); it matches ns1 only.
    for (const o of objects.filter((x) => !x.kind.startsWith('ValidatingAdmissionPolicy'))) expect(o.metadata.namespace).toBe('ns1');
    expect(objects.some((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).toBe(false);
  });

  test('has its metrics scraped by a ServiceMonitor of its own when serviceMonitor.enabled', () => {
    const withMonitor = (v: ChartValues) => {
      enable(v);
      v.serviceMonitor.enabled = true;
      v.serviceMonitor.labels = { release: 'prometheus' };
    };
    expect(portalObjects(render(enable)).map((o) => o.kind)).not.toContain('ServiceMonitor');
    const sm = find(render(withMonitor), 'ServiceMonitor', '-portal');
    expect(sm.metadata.labels.release).toBe('prometheus');
    expect(sm.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('portal');
    expect(sm.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s' }]);
  });

  test('runs the portal entrypoint of the operator image under the restricted profile', () => {
    const objects = render(enable);
    const portal = find(objects, 'Deployment', '-portal').spec.template.spec;
    const operator = find(objects, 'Deployment', '-operator').spec.template.spec;
    const c = portal.containers[0];
    expect(portal.serviceAccountName).toBe('nebari-llm-serving-portal');
    expect(c.image).toBe(operator.containers[0].image);
    expect(c.command).toEqual([...operator.containers[0].command.slice(0, -1), '/app/lib/src/portal/main.js']);
    expect(c.securityContext).toEqual(operator.containers[0].securityContext);
    expect(portal.securityContext).toEqual(operator.securityContext);
    // Metrics on their own port, which the HTTPRoute does not route (issue 29, Medium 7).
    expect(c.ports).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.resources).toEqual({ requests: { cpu: '20m', memory: '96Mi' }, limits: { memory: '256Mi' } });
  });

  test('passes the process contract environment, built from the values', () => {
    const e = env(
      find(
        render(
          (v) => {
            enable(v);
            v.platform.jwt.groupsClaim = 'roles';
            v.portal.adminGroups = ['llm-admins', 'ops'];
            v.portal.oidc.clientSecret.name = 'portal-oidc';
          },
          { releaseName: 'r1', namespace: 'ns1' },
        ),
        'Deployment',
        '-portal',
      ),
    );
    expect(e).toEqual({
      POD_NAMESPACE: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
      POD_NAME: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } },
      NLS_PORTAL_NAMESPACE: 'ns1',
      NLS_PORTAL_URL: 'https://llm-keys.example.com',
      NLS_PORTAL_OIDC_ISSUER: 'https://id.example.com/realms/nebari',
      NLS_PORTAL_OIDC_GROUPS_CLAIM: 'roles',
      NLS_PORTAL_OIDC_CLIENT_ID: 'llm-keys',
      NLS_PORTAL_OIDC_CLIENT_SECRET: { secretKeyRef: { name: 'portal-oidc', key: 'client-secret' } },
      NLS_PORTAL_OIDC_SCOPES: 'openid profile email offline_access',
      NLS_PORTAL_ADMIN_GROUPS: 'llm-admins,ops',
      NLS_PORTAL_KEY_EXPIRY_DEFAULT_DAYS: '30',
      NLS_PORTAL_KEY_EXPIRY_MAX_DAYS: '90',
      NLS_PORTAL_KEYS_PER_USER_PER_MODEL: '10',
      NLS_PORTAL_MINTS_PER_USER_PER_HOUR: '20',
      NLS_PORTAL_GROUP_REFRESH_SECONDS: '300',
      NLS_PORTAL_GROUP_REFRESH_FAIL_CLOSED_SECONDS: '86400',
      NLS_PORTAL_METRICS_PORT: '9090',
      NLS_PORTAL_SESSION_SECRET: 'r1-nebari-llm-serving-portal-session',
      NLS_PORTAL_SECRETS_ROLE: 'r1-nebari-llm-serving-portal-secrets',
      NLS_PORTAL_EXTERNAL_ENDPOINT: 'https://llm.example.com',
    });
  });

  test('offers the quota tiers only while quotas are on, with the groups each tier is restricted to', () => {
    const quotasOn = (v: ChartValues) => {
      enable(v);
      v.quotas.rateLimitBackend = 'redis://redis.envoy-gateway-system:6379';
      v.quotas.tiers = [
        { name: 'standard', tokens: 100000, unit: 'Hour' },
        { name: 'large', description: 'For batch jobs', tokens: 5000000, unit: 'Day', requestsPerMinute: 60, groups: ['batch', 'ml-admins'] },
      ];
    };
    expect(env(find(render(enable), 'Deployment', '-portal'))).not.toHaveProperty('NLS_PORTAL_QUOTA_TIERS');
    const tiers = JSON.parse(env(find(render(quotasOn), 'Deployment', '-portal')).NLS_PORTAL_QUOTA_TIERS);
    expect(tiers).toEqual({
      costType: 'TotalToken',
      default: 'standard',
      tiers: [
        { name: 'standard', description: '100000 tokens per hour', groups: [], tokens: 100000, unit: 'Hour' },
        { name: 'large', description: 'For batch jobs', groups: ['batch', 'ml-admins'], tokens: 5000000, unit: 'Day' },
      ],
    });
  });

  test('renders the per-user key limits from portal.keyLimits', () => {
    const e = env(
      find(
        render((v) => {
          enable(v);
          v.portal.keyLimits = { keysPerUserPerModel: 3, mintsPerUserPerHour: 7 };
        }),
        'Deployment',
        '-portal',
      ),
    );
    expect(e).toMatchObject({ NLS_PORTAL_KEYS_PER_USER_PER_MODEL: '3', NLS_PORTAL_MINTS_PER_USER_PER_HOUR: '7' });
  });

  test('writes the tiers JSON with sorted keys, as Helm toJson does', () => {
    expect(portalQuotaTiersJson({ rateLimitBackend: 'x', costType: 'OutputToken', defaultTier: 'a', tiers: [{ name: 'a', tokens: 1, unit: 'Minute' }] })).toBe(
      '{"costType":"OutputToken","default":"a","tiers":[{"description":"1 tokens per minute","groups":[],"name":"a","tokens":1,"unit":"Minute"}]}',
    );
  });

  test('mounts a CA bundle for the issuer when one is named', () => {
    const d = find(
      render((v) => {
        enable(v);
        v.portal.oidc.caConfigMap.name = 'corp-ca';
      }),
      'Deployment',
      '-portal',
    ).spec.template.spec;
    expect(env({ spec: { template: { spec: d } } }).NLS_PORTAL_OIDC_CA_FILE).toBe('/etc/nebari-llm-serving/portal-oidc-ca/ca.crt');
    expect(d.volumes).toContainEqual({ name: 'oidc-ca', configMap: { name: 'corp-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    expect(d.containers[0].volumeMounts).toContainEqual({ name: 'oidc-ca', mountPath: '/etc/nebari-llm-serving/portal-oidc-ca', readOnly: true });
  });

  test('grants exactly the contract rights, in the release namespace only, and no Secret by kind but create', () => {
    expect(portalRoleRules({ sessionSecret: 'my-session', secretsRole: 'rel-portal-secrets' })).toEqual([
      { apiGroups: ['llm.nebari.dev'], resources: ['llmmodels', 'passthroughmodels'], verbs: ['get', 'list'] },
      // Issue 29, Medium 6: no get, list or patch of Secrets by kind, and no delete at all.
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['my-session'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], resourceNames: ['rel-portal-secrets'], verbs: ['get'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    ]);
    const objects = render((v) => {
      enable(v);
      v.portal.sessionSecretName = 'my-session';
    });
    expect(find(objects, 'Role', '-portal').rules).toEqual(portalRoleRules({ sessionSecret: 'my-session', secretsRole: 'nebari-llm-serving-portal-secrets' }));
    const binding = find(objects, 'RoleBinding', '-portal');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'nebari-llm-serving-portal', namespace: 'nebari-llm-serving-system' }]);
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'nebari-llm-serving-portal' });
    // The operator's Role (never rendered: an upgrade would reset it) is bound, and named to both processes.
    expect(objects.filter((o) => o.kind === 'Role').map((o) => o.metadata.name)).not.toContain('nebari-llm-serving-portal-secrets');
    const secretsBinding = find(objects, 'RoleBinding', '-portal-secrets');
    expect(secretsBinding.subjects).toEqual(binding.subjects);
    expect(secretsBinding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'nebari-llm-serving-portal-secrets' });
    expect(env(find(objects, 'Deployment', '-portal')).NLS_PORTAL_SECRETS_ROLE).toBe('nebari-llm-serving-portal-secrets');
    expect(env(find(objects, 'Deployment', '-operator')).NLS_PORTAL_SECRETS_ROLE).toBe('nebari-llm-serving-portal-secrets');
    // Without the portal the operator keeps no such Role.
    expect(env(find(render(), 'Deployment', '-operator')).NLS_PORTAL_SECRETS_ROLE).toBeUndefined();
  });

  test("pins the portal's Secret and ConfigMap writes with an admission policy matched to its ServiceAccount only", () => {
    const objects = render((v) => {
      enable(v);
      v.portal.sessionSecretName = 'my-session';
    });
    const policy = find(objects, 'ValidatingAdmissionPolicy', '-portal-writes');
    expect(policy.spec.matchConditions).toEqual([{ name: 'portal-service-account', expression: "request.userInfo.username == 'system:serviceaccount:nebari-llm-serving-system:nebari-llm-serving-portal'" }]);
    expect(policy.spec.matchConstraints.namespaceSelector).toEqual({ matchLabels: { 'kubernetes.io/metadata.name': 'nebari-llm-serving-system' } });
    // The session Secret's configured name is the only fixed name it may create.
    expect(policy.spec.validations[1].expression).toContain("object.metadata.name == 'my-session'");
    expect(find(objects, 'ValidatingAdmissionPolicyBinding', '-portal-writes').spec).toEqual({ policyName: 'nebari-llm-serving-portal-writes', validationActions: ['Deny'] });
    expect(portalObjects(render()).map((o) => o.kind)).not.toContain('ValidatingAdmissionPolicy');
  });

  test('routes its own host name on the internal endpoint Gateway to the Service', () => {
    const objects = render((v) => {
      enable(v);
      v.portal.hostname = 'Keys.Example.org.';
    });
    const route = find(objects, 'HTTPRoute', '-portal');
    expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(route.spec).toEqual({
      parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'nebari-internal-gateway', namespace: 'envoy-gateway-system', sectionName: 'llm-internal-https' }],
      hostnames: ['keys.example.org'],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ group: '', kind: 'Service', name: 'nebari-llm-serving-portal', port: 8080, weight: 1 }] }],
    });
    expect(find(objects, 'Service', '-portal').spec.ports).toEqual([
      { name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' },
      { name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP' },
    ]);
    expect(env(find(objects, 'Deployment', '-portal')).NLS_PORTAL_URL).toBe('https://keys.example.org');
  });

  test('admits ingress from the Gateway namespace unless peers are given, and to metrics from networkPolicy.metricsFrom; no policy without networkPolicy.enabled', () => {
    const ingress = (change: (v: ChartValues) => void) => find(render(change), 'NetworkPolicy', '-portal').spec.ingress;
    const metrics = { ports: [{ port: 9090, protocol: 'TCP' }] };
    expect(ingress(enable)).toEqual([{ ports: [{ port: 8080, protocol: 'TCP' }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'envoy-gateway-system' } } }] }, metrics]);
    const peers = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'gw' } } }];
    expect(
      ingress((v) => {
        enable(v);
        v.portal.networkPolicy.from = peers;
        v.networkPolicy.metricsFrom = peers;
      }),
    ).toEqual([{ ports: [{ port: 8080, protocol: 'TCP' }], from: peers }, { ...metrics, from: peers }]);
    expect(
      portalObjects(
        render((v) => {
          enable(v);
          v.networkPolicy.enabled = false;
        }),
      ).map((o) => o.kind),
    ).not.toContain('NetworkPolicy');
  });

  test('adds a PodDisruptionBudget only with more than one replica', () => {
    expect(portalObjects(render(enable)).map((o) => o.kind)).not.toContain('PodDisruptionBudget');
    const pdb = find(
      render((v) => {
        enable(v);
        v.portal.replicas = 2;
      }),
      'PodDisruptionBudget',
      '-portal',
    );
    expect(pdb.spec.minAvailable).toBe(1);
  });

  test.each([
    ['the client ID', (v: ChartValues) => (v.portal.oidc.clientId = ''), PORTAL_REQUIRED.clientId],
    ['the issuer', (v: ChartValues) => (v.platform.jwt.issuer = ''), PORTAL_REQUIRED.issuer],
    ['a host name', (v: ChartValues) => (v.platform.baseDomain = ''), PORTAL_REQUIRED.hostname],
  ])('refuses to render without %s, naming the value to set', (_what, unset, message) => {
    expect(() =>
      render((v) => {
        enable(v);
        unset(v);
      }),
    ).toThrow(message);
  });
});
