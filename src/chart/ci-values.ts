// charts/nebari-llm-serving/ci/*-values.yaml: the value sets the chart is tested with (the
// chart-testing convention). The integration test renders each with real helm, applies every
// object to a real API server and compares it with the plain rendering of the same values.
import { stringify } from 'yaml';

export interface CiValues {
  /** File name under ci/. */
  readonly file: string;
  /** What the set exercises (the file's comment). */
  readonly description: string;
  readonly values: Record<string, unknown>;
}

export const CI_VALUES: readonly CiValues[] = [
  {
    file: 'cert-manager-values.yaml',
    description: 'Webhook certificates from cert-manager: a self-signed Issuer, a Certificate and CA injection.',
    values: { webhook: { certificates: { mode: 'cert-manager' } } },
  },
  {
    file: 'self-managed-values.yaml',
    description: 'Certificates self-managed by the operator, with the platform settings filled in.',
    values: {
      webhook: { certificates: { mode: 'self-managed' } },
      platform: { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['llm'] }, external: { hostname: 'api.example.com' } },
    },
  },
  {
    file: 'upgrade-guard-values.yaml',
    description: 'Phase 1 of the guarded upgrade: the guard on, everything else as before.',
    values: { webhook: { upgradeGuard: { enabled: true } } },
  },
  {
    file: 'agentdeployment-webhooks-off-values.yaml',
    description: 'Phase 2 of the guarded upgrade: guard on and the AgentDeployment routes off.',
    values: { webhook: { upgradeGuard: { enabled: true }, agentDeployment: { enabled: false } } },
  },
  {
    file: 'watch-namespaces-values.yaml',
    description: 'AgentDeployments in two more namespaces: the operator gets a Role and RoleBinding in each.',
    values: { watchNamespaces: ['team-agents-a', 'team-agents-b'] },
  },
  {
    file: 'three-replicas-values.yaml',
    description: 'Three operator replicas: leader election forced on and a PodDisruptionBudget.',
    values: { operator: { replicas: 3, leaderElection: false, podDisruptionBudget: { minAvailable: 2 } } },
  },
  {
    file: 'custom-images-values.yaml',
    description: 'A private registry: image by digest, pull policy and pull secrets.',
    values: {
      imagePullSecrets: [{ name: 'registry-credentials' }],
      operator: { image: { repository: 'registry.example.com/mirror/nebari-llm-serving', digest: `sha256:${'0123456789abcdef'.repeat(4)}`, pullPolicy: 'Always' } },
      providers: {
        vllm: { image: 'registry.example.com/mirror/vllm-openai:v0.11.0' },
        modelDownloader: { image: 'registry.example.com/mirror/python:3.12-slim' },
        endpointPicker: { image: 'registry.example.com/mirror/epp:v1.0.2' },
        storageClassName: 'fast-ssd',
      },
    },
  },
  {
    file: 'chart-namespace-values.yaml',
    description: 'The chart creates the release namespace (opt-in; install with --create-namespace --take-ownership).',
    values: { namespace: { create: true } },
  },
  {
    file: 'portal-values.yaml',
    description: 'The self-service key portal (two replicas, a confidential client, a private CA, admin groups, its metrics scraped, usage read from a Prometheus) and per-key token quotas on.',
    values: {
      platform: { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', groupsClaim: 'groups', audiences: ['nebari-llm'] } },
      portal: {
        enabled: true,
        hostname: 'keys.example.com',
        replicas: 2,
        oidc: { clientId: 'nebari-llm-keys', clientSecret: { name: 'llm-keys-oidc' }, caConfigMap: { name: 'corp-ca' } },
        adminGroups: ['llm-admins'],
        prometheusURL: 'http://prometheus-operated.monitoring:9090',
        keyExpiry: { defaultDays: 14, maxDays: 60 },
        podLabels: { 'example.com/pod': 'portal' },
      },
      serviceMonitor: { enabled: true },
      quotas: {
        rateLimitBackend: 'redis://redis.envoy-gateway-system:6379',
        costType: 'OutputToken',
        defaultTier: 'small',
        tiers: [
          { name: 'small', tokens: 100000, unit: 'Hour' },
          { name: 'large', description: 'Batch jobs', tokens: 5000000, unit: 'Day', requestsPerMinute: 120 },
        ],
      },
    },
  },
  {
    file: 'everything-values.yaml',
    description: 'Every optional object and pod setting: gateway objects, ServiceMonitor, PrometheusRule, Grafana dashboards, a price table, an existing ClusterIssuer, scheduling and labels.',
    values: {
      commonLabels: { 'example.com/team': 'ml-platform' },
      namespace: { labels: { 'example.com/tier': 'platform' } },
      serviceAccount: { annotations: { 'example.com/role': 'operator' } },
      operator: {
        logLevel: 'debug',
        priorityClassName: 'system-cluster-critical',
        podAnnotations: { 'example.com/scrape': 'true' },
        podLabels: { 'example.com/pod': 'operator' },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'platform', effect: 'NoSchedule' }],
        affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'node-role', operator: 'In', values: ['platform'] }] } }] } },
        resources: { requests: { cpu: '200m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
      },
      webhook: { timeoutSeconds: 5, certificates: { mode: 'cert-manager', certManager: { issuerRef: { name: 'corp-ca', kind: 'ClusterIssuer' } } } },
      networkPolicy: { metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
      serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prometheus' } },
      prometheusRule: { enabled: true, labels: { release: 'prometheus' }, rateWindow: '10m', alerts: { modelRequestErrors: { for: '2m', threshold: 0.02 } } },
      grafanaDashboards: { enabled: true, labels: { grafana_dashboard: '1', release: 'prometheus' }, annotations: { grafana_folder: 'LLM serving' } },
      pricing: { currency: 'EUR', models: [{ model: 'gamma', input: 2.5, output: 10, cachedInput: 0.25 }, { namespace: 'team-a', model: 'llama-8b', input: 0.1, output: 0.4 }] },
      gateway: {
        gatewayClass: { create: true },
        gateway: { create: true },
        gatewayConfig: { create: true, extProcResources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } } },
        clientTrafficPolicy: { create: true, bufferLimit: '100Mi' },
      },
    },
  },
];

export function ciValuesYaml(c: CiValues, header: string): string {
  return `${header}# ${c.description}\n${stringify(c.values, { lineWidth: 0 })}`;
}
