// The self-service key portal (issue #20), rendered only with `portal.enabled`: a Deployment running
// the portal entrypoint of the operator image, its own ServiceAccount with a Role limited to the
// release namespace (the portal process contract: src/portal/README.md), a Service, an HTTPRoute on
// the internal endpoint's Gateway, and — like the operator — a NetworkPolicy and, with more than
// one replica, a PodDisruptionBudget. It runs apart from the operator so the internet-facing
// surface and the key-writing rights stay out of the controller's pod.
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { HttpRoute, HttpRouteSpecRulesMatchesPathType } from '../imports/httproutes-gateway.networking.k8s.io';
import { CHART_NAME } from './helpers';
import { kubeObject } from './kube-object';
import { namespacedMeta, objectLabels, selectorLabels } from './labels';
import { API_GROUP, objectNames } from './names';
import { operatorImage, operatorNodeFlags, restrictedContainerSecurity } from './operator';
import { cond, helmValue, RenderContext, valueAt } from './render-context';
import { lowerWithoutRootDot } from '../src/translate/gateway/hostname';
import { KEY_LIMIT_ENV } from '../src/translate/keys/limits';

export const PORTAL_COMPONENT = 'portal';
export const PORTAL_CONTAINER = 'portal';
/** Plain HTTP; TLS ends at the Gateway. */
export const PORTAL_PORT = 8080;
/** Where the optional CA bundle trusted for the OIDC issuer is mounted. */
export const PORTAL_OIDC_CA_DIR = '/etc/nebari-llm-serving/portal-oidc-ca';

export const portalEnabled = cond.truthy('portal.enabled');
export const portalNetworkPolicyEnabled = cond.and(portalEnabled, cond.truthy('networkPolicy.enabled'));
export const portalMultipleReplicas = cond.and(portalEnabled, cond.gt('portal.replicas', 1));

export interface PortalProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

interface PortalValues {
  platform: {
    baseDomain: string;
    external: { hostname: string };
    internal: { gatewayNamespace: string };
    jwt: { issuer: string; groupsClaim: string };
  };
  portal: {
    hostname: string;
    sessionSecretName: string;
    oidc: { clientId: string };
  };
  quotas: QuotaValues;
}

interface QuotaValues {
  rateLimitBackend: string;
  costType: string;
  defaultTier: string;
  tiers: Array<{ name: string; description?: string; tokens: number; unit: string; groups?: string[] }>;
}

/** Messages of the install-time checks: each names the value and how to set it. */
export const PORTAL_REQUIRED = {
  hostname:
    'portal.enabled needs a host name: set portal.hostname (e.g. --set portal.hostname=llm-keys.example.com) or platform.baseDomain (the portal then serves llm-keys.<baseDomain>)',
  issuer: 'portal.enabled needs the OIDC issuer: set platform.jwt.issuer (e.g. --set platform.jwt.issuer=https://keycloak.example.com/realms/nebari)',
  clientId: 'portal.enabled needs an OIDC client: set portal.oidc.clientId to the client registered for the portal (e.g. --set portal.oidc.clientId=nebari-llm-keys)',
};

function required<T>(value: T, message: string): T {
  if (!value) throw new Error(message);
  return value;
}

/** The portal's host name: `portal.hostname`, else `llm-keys.<baseDomain>`, normalised; fails when neither is set. */
export function portalHostname(ctx: RenderContext): string {
  return ctx.helper('portalHostname', (v) => {
    const { portal, platform } = v as PortalValues;
    return lowerWithoutRootDot(required(portal.hostname || (platform.baseDomain ? `llm-keys.${platform.baseDomain}` : ''), PORTAL_REQUIRED.hostname));
  });
}

/** The Secret holding the session encryption key (the portal creates it if missing). */
export function portalSessionSecretName(ctx: RenderContext): string {
  return ctx.helper('portalSessionSecretName', (v) => (v as PortalValues).portal.sessionSecretName || `${ctx.fullname}-portal-session`);
}

/** Base URL of the external endpoint, for the example `curl` the portal shows. */
function externalEndpointUrl(ctx: RenderContext): string {
  return ctx.helper('portalExternalEndpoint', (v) => {
    const { platform } = v as PortalValues;
    return `https://${lowerWithoutRootDot(platform.external.hostname || `llm.${platform.baseDomain}`)}`;
  });
}

/** Sorts object keys recursively, as Helm's toJson writes maps. */
function sortedJson(value: unknown): string {
  const sort = (x: unknown): unknown =>
    Array.isArray(x) ? x.map(sort) : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])])) : x;
  return JSON.stringify(sort(value));
}

/** The tier text shown to users when a tier has no description of its own. */
export function tierDescription(tier: { description?: string; tokens: number; unit: string }): string {
  return tier.description || `${tier.tokens} tokens per ${tier.unit.toLowerCase()}`;
}

/**
 * NLS_PORTAL_QUOTA_TIERS: the tiers users choose from at mint time (names, descriptions and the
 * groups allowed each), with each tier's limit and what the quotas charge, for the usage page's share.
 */
export function portalQuotaTiersJson(quotas: QuotaValues): string {
  return sortedJson({
    costType: quotas.costType,
    default: quotas.defaultTier,
    tiers: quotas.tiers.map((t) => ({ description: tierDescription(t), groups: t.groups ?? [], name: t.name, tokens: t.tokens, unit: t.unit })),
  });
}

/** `_helpers.tpl` entries of the portal (the Helm twins of the functions above). */
export function portalHelpersTemplate(chart = CHART_NAME): string {
  return `{{/* Portal host name: portal.hostname, else llm-keys.<baseDomain>; lower-cased, one trailing root dot removed. */}}
{{- define "${chart}.portalHostname" -}}
{{- $host := .Values.portal.hostname -}}
{{- if and (not $host) .Values.platform.baseDomain -}}
{{- $host = printf "llm-keys.%s" .Values.platform.baseDomain -}}
{{- end -}}
{{- required ${JSON.stringify(PORTAL_REQUIRED.hostname)} $host | lower | trimSuffix "." -}}
{{- end -}}

{{/* Secret holding the portal's session encryption key. */}}
{{- define "${chart}.portalSessionSecretName" -}}
{{- default (printf "%s-portal-session" (include "${chart}.fullname" .)) .Values.portal.sessionSecretName -}}
{{- end -}}

{{/* Base URL of the external endpoint (for the portal's example curl). */}}
{{- define "${chart}.portalExternalEndpoint" -}}
{{- printf "https://%s" (default (printf "llm.%s" .Values.platform.baseDomain) .Values.platform.external.hostname | lower | trimSuffix ".") -}}
{{- end -}}

{{/* Quota tiers offered at mint time, as JSON (names, descriptions, the groups allowed each, limits and what quotas charge). */}}
{{- define "${chart}.portalQuotaTiers" -}}
{{- $tiers := list -}}
{{- range .Values.quotas.tiers -}}
{{- $tiers = append $tiers (dict "name" .name "description" (default (printf "%d tokens per %s" (int .tokens) (lower .unit)) .description) "groups" (default (list) .groups) "tokens" (int .tokens) "unit" .unit) -}}
{{- end -}}
{{- toJson (dict "costType" .Values.quotas.costType "default" .Values.quotas.defaultTier "tiers" $tiers) -}}
{{- end -}}
`;
}

/**
 * The portal's rights of its own, exactly those of the process contract and only in the release
 * namespace: models read; its session Secret read and written by name; per-user and session
 * Secrets created; key metadata ConfigMaps and audit shards read, created and written; Events;
 * one Lease for the group-refresh loop; and the operator's Role naming the other Secrets it may
 * read, read by name (the group refresh walks the users it names).
 */
export function portalRoleRules(names: { sessionSecret: string; secretsRole: string }) {
  // Only what the portal's code calls (it reads by list and get, never watches; writes by create
  // and patch). No right on Secrets by kind but create, which RBAC cannot limit to names: the
  // chart's admission policy for the portal (constructs/portal-write-policy.ts) pins which Secrets
  // and ConfigMaps it may create and change. Key Secrets and user Secrets it gets and patches
  // through the operator's Role (src/operator/portal-secrets-role.ts), by name.
  // No delete: the operator creates and deletes key objects.
  return [
    { apiGroups: [API_GROUP], resources: ['llmmodels', 'passthroughmodels'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [names.sessionSecret], verbs: ['get', 'patch'] },
    // Key metadata and audit shards hold no key material (docs/security.md).
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch'] },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], resourceNames: [names.secretsRole], verbs: ['get'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
  ];
}

export class PortalServiceAccount extends Construct {
  constructor(scope: Construct, id: string, props: PortalProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    const meta = namespacedMeta(ctx, names.portal, PORTAL_COMPONENT);
    kubeObject(k8s.KubeServiceAccount, this, 'ServiceAccount', { metadata: meta, automountServiceAccountToken: true });
    const subjects = [{ kind: 'ServiceAccount', name: names.portal, namespace: ctx.namespace }];
    kubeObject(k8s.KubeRole, this, 'Role', { metadata: meta, rules: portalRoleRules({ sessionSecret: portalSessionSecretName(ctx), secretsRole: names.portalSecretsRole }) });
    kubeObject(k8s.KubeRoleBinding, this, 'RoleBinding', { metadata: meta, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.portal }, subjects });
    // To the Role the operator keeps (the key and user Secrets by name); it may not exist yet.
    kubeObject(k8s.KubeRoleBinding, this, 'SecretsRoleBinding', {
      metadata: namespacedMeta(ctx, names.portalSecretsRole, PORTAL_COMPONENT),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.portalSecretsRole },
      subjects,
    });
  }
}

export class PortalDeployment extends Construct {
  constructor(scope: Construct, id: string, props: PortalProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    const env = (name: string, value: string): k8s.EnvVar => ({ name, value });
    // `required`: Helm stops the install with the message; the plain rendering throws it.
    const requiredText = (path: string, message: string) =>
      helmValue<string>(ctx.expression(`required ${JSON.stringify(message)} .Values.${path} | quote`, (v) => String(required(valueAt(v, path), message))));
    const caConfigured = cond.truthy('portal.oidc.caConfigMap.name');
    kubeObject(k8s.KubeDeployment, this, 'Resource', {
      metadata: namespacedMeta(ctx, names.portal, PORTAL_COMPONENT),
      spec: {
        replicas: helmValue<number>(ctx.value('portal.replicas')),
        revisionHistoryLimit: 5,
        selector: { matchLabels: selectorLabels(ctx, PORTAL_COMPONENT) },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) } },
        template: {
          metadata: {
            labels: { ...objectLabels(ctx, PORTAL_COMPONENT), ...ctx.merge('portal.podLabels') },
            ...ctx.block('annotations', 'portal.podAnnotations'),
          },
          spec: {
            serviceAccountName: names.portal,
            ...ctx.block('imagePullSecrets', 'imagePullSecrets'),
            ...ctx.block('nodeSelector', 'portal.nodeSelector'),
            ...ctx.block('tolerations', 'portal.tolerations'),
            securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: PORTAL_CONTAINER,
                image: operatorImage(ctx),
                imagePullPolicy: helmValue<string>(ctx.value('operator.image.pullPolicy')),
                // The operator image, with the operator's V8 flags, running the portal's entrypoint.
                command: ['/nodejs/bin/node', ...operatorNodeFlags, '/app/lib/src/portal/main.js'],
                env: [
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
                  { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
                  env('NLS_PORTAL_NAMESPACE', ctx.namespace),
                  env('NLS_PORTAL_URL', `https://${portalHostname(ctx)}`),
                  // The same issuer and groups claim the internal endpoint checks tokens with.
                  env('NLS_PORTAL_OIDC_ISSUER', requiredText('platform.jwt.issuer', PORTAL_REQUIRED.issuer)),
                  env('NLS_PORTAL_OIDC_GROUPS_CLAIM', ctx.text('platform.jwt.groupsClaim')),
                  env('NLS_PORTAL_OIDC_CLIENT_ID', requiredText('portal.oidc.clientId', PORTAL_REQUIRED.clientId)),
                  // A confidential client's secret, from the user's Secret; absent for a public client.
                  ...ctx.whenItem(cond.truthy('portal.oidc.clientSecret.name'), {
                    name: 'NLS_PORTAL_OIDC_CLIENT_SECRET',
                    valueFrom: { secretKeyRef: { name: ctx.text('portal.oidc.clientSecret.name'), key: ctx.text('portal.oidc.clientSecret.key') } },
                  }),
                  env('NLS_PORTAL_OIDC_SCOPES', ctx.text('portal.oidc.scopes')),
                  ...ctx.whenItem(caConfigured, env('NLS_PORTAL_OIDC_CA_FILE', `${PORTAL_OIDC_CA_DIR}/ca.crt`)),
                  env('NLS_PORTAL_ADMIN_GROUPS', helmValue<string>(ctx.expression('join "," .Values.portal.adminGroups | quote', (v) => (v as { portal: { adminGroups: string[] } }).portal.adminGroups.join(',')))),
                  env('NLS_PORTAL_KEY_EXPIRY_DEFAULT_DAYS', ctx.text('portal.keyExpiry.defaultDays')),
                  env('NLS_PORTAL_KEY_EXPIRY_MAX_DAYS', ctx.text('portal.keyExpiry.maxDays')),
                  env(KEY_LIMIT_ENV.keysPerUserPerModel, ctx.text('portal.keyLimits.keysPerUserPerModel')),
                  env(KEY_LIMIT_ENV.mintsPerUserPerHour, ctx.text('portal.keyLimits.mintsPerUserPerHour')),
                  env('NLS_PORTAL_GROUP_REFRESH_SECONDS', ctx.text('portal.groupRefreshSeconds')),
                  env('NLS_PORTAL_GROUP_REFRESH_FAIL_CLOSED_SECONDS', ctx.text('portal.groupRefreshFailClosedSeconds')),
                  env('NLS_PORTAL_METRICS_PORT', ctx.text('portal.metricsPort')),
                  env('NLS_PORTAL_SESSION_SECRET', portalSessionSecretName(ctx)),
                  env('NLS_PORTAL_SECRETS_ROLE', names.portalSecretsRole),
                  ...ctx.whenItem(cond.or(cond.truthy('platform.external.hostname'), cond.truthy('platform.baseDomain')), env('NLS_PORTAL_EXTERNAL_ENDPOINT', externalEndpointUrl(ctx))),
                  // Tiers only while quotas are on (empty means quotas off, per the contract).
                  ...ctx.whenItem(cond.truthy('portal.prometheusURL'), env('NLS_PORTAL_PROMETHEUS_URL', ctx.text('portal.prometheusURL'))),
                  ...ctx.whenItem(cond.truthy('quotas.rateLimitBackend'), env('NLS_PORTAL_QUOTA_TIERS', ctx.helper('portalQuotaTiers', (v) => portalQuotaTiersJson((v as PortalValues).quotas)))),
                ],
                ports: [
                  { name: 'http', containerPort: PORTAL_PORT, protocol: 'TCP' },
                  { name: 'metrics', containerPort: helmValue<number>(ctx.value('portal.metricsPort')), protocol: 'TCP' },
                ],
                livenessProbe: { httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('http') }, initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 3 },
                readinessProbe: { httpGet: { path: '/readyz', port: k8s.IntOrString.fromString('http') }, periodSeconds: 5, failureThreshold: 3 },
                ...ctx.block('resources', 'portal.resources'),
                securityContext: restrictedContainerSecurity(),
                volumeMounts: [
                  { name: 'tmp', mountPath: '/tmp' },
                  ...ctx.whenItem(caConfigured, { name: 'oidc-ca', mountPath: PORTAL_OIDC_CA_DIR, readOnly: true }),
                ],
              },
            ],
            volumes: [
              { name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('16Mi') } },
              ...ctx.whenItem(caConfigured, {
                name: 'oidc-ca',
                configMap: { name: ctx.text('portal.oidc.caConfigMap.name'), items: [{ key: ctx.text('portal.oidc.caConfigMap.key'), path: 'ca.crt' }] },
              }),
            ],
          },
        },
      },
    });
  }
}

export class PortalService extends Construct {
  constructor(scope: Construct, id: string, props: PortalProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubeService, this, 'Resource', {
      metadata: namespacedMeta(ctx, objectNames(ctx).portal, PORTAL_COMPONENT),
      spec: {
        type: 'ClusterIP',
        selector: selectorLabels(ctx, PORTAL_COMPONENT),
        ports: [
          { name: 'http', port: PORTAL_PORT, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' },
          // Not routed: the HTTPRoute names port 8080 only.
          { name: 'metrics', port: helmValue<number>(ctx.value('portal.metricsPort')), targetPort: k8s.IntOrString.fromString('metrics'), protocol: 'TCP' },
        ],
      },
    });
  }
}

/**
 * The portal behind the internal endpoint's Gateway (users log in with the same OIDC provider).
 * Fields the API server would default are written out, so the stored route equals the rendering.
 */
export class PortalHttpRoute extends Construct {
  constructor(scope: Construct, id: string, props: PortalProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    kubeObject(HttpRoute, this, 'Resource', {
      metadata: namespacedMeta(ctx, names.portal, PORTAL_COMPONENT),
      spec: {
        parentRefs: [
          {
            group: 'gateway.networking.k8s.io',
            kind: 'Gateway',
            name: ctx.text('platform.internal.gatewayName'),
            namespace: ctx.text('platform.internal.gatewayNamespace'),
            ...ctx.when(cond.truthy('platform.internal.sectionName'), { sectionName: ctx.text('platform.internal.sectionName') }),
          },
        ],
        hostnames: [portalHostname(ctx)],
        rules: [
          {
            matches: [{ path: { type: HttpRouteSpecRulesMatchesPathType.PATH_PREFIX, value: '/' } }],
            backendRefs: [{ group: '', kind: 'Service', name: names.portal, port: PORTAL_PORT, weight: 1 }],
          },
        ],
      },
    });
  }
}

/** Ingress to the portal pods on its port, from the Gateway's namespace unless peers are given; to its metrics port from `networkPolicy.metricsFrom`. */
export class PortalNetworkPolicy extends Construct {
  constructor(scope: Construct, id: string, props: PortalProps) {
    super(scope, id);
    const ctx = props.context;
    const gatewayNamespacePeer = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ctx.text('platform.internal.gatewayNamespace') } } }];
    kubeObject(k8s.KubeNetworkPolicy, this, 'Resource', {
      metadata: namespacedMeta(ctx, objectNames(ctx).portal, PORTAL_COMPONENT),
      spec: {
        podSelector: { matchLabels: selectorLabels(ctx, PORTAL_COMPONENT) },
        policyTypes: ['Ingress'],
        ingress: [
          {
            ports: [{ port: k8s.IntOrString.fromNumber(PORTAL_PORT), protocol: 'TCP' }],
            ...ctx.block('from', 'portal.networkPolicy.from'),
            ...ctx.when(cond.not(cond.truthy('portal.networkPolicy.from')), { from: gatewayNamespacePeer }),
          },
          // Prometheus, from the same peers as the operator's metrics.
          { ports: [{ port: k8s.IntOrString.fromNumber(helmValue<number>(ctx.value('portal.metricsPort'))), protocol: 'TCP' }], ...ctx.block('from', 'networkPolicy.metricsFrom') },
        ],
      },
    });
  }
}

/** Only rendered when portal.replicas > 1 (as for the operator). */
export class PortalPodDisruptionBudget extends Construct {
  constructor(scope: Construct, id: string, props: PortalProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubePodDisruptionBudget, this, 'Resource', {
      metadata: namespacedMeta(ctx, objectNames(ctx).portal, PORTAL_COMPONENT),
      spec: { minAvailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selectorLabels(ctx, PORTAL_COMPONENT) } },
    });
  }
}
