// The chart's template files: which constructs each holds and the condition that switches the whole
// file on. Helm rendering and plain rendering (deploy/ bundles, custom builds) both walk this list.
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import {
  AgentDeploymentUpgradeGuard,
  AlertRules,
  GrafanaDashboards,
  SpendRules,
  AgentNamespaceRbac,
  GatewayNamespaceRbac,
  AIGatewayConfig,
  certManagerMode,
  cond,
  Condition,
  createsIssuer,
  Gateway,
  GatewayClass,
  GatewayClientTrafficPolicy,
  KeyAuditPolicy,
  multipleReplicas,
  MutatingWebhooks,
  OperatorDeployment,
  OperatorMetricsService,
  OperatorNetworkPolicy,
  OperatorPodDisruptionBudget,
  OperatorRbac,
  OperatorServiceAccount,
  OperatorServiceMonitor,
  PortalDeployment,
  portalEnabled,
  PortalHttpRoute,
  portalMultipleReplicas,
  PortalNetworkPolicy,
  portalNetworkPolicyEnabled,
  PortalPodDisruptionBudget,
  PortalService,
  PortalServiceAccount,
  PortalWritePolicy,
  PortalServiceMonitor,
  UserFacingRoles,
  ReleaseNamespace,
  RenderContext,
  SelfSignedIssuer,
  upgradeGuardEnabled,
  ValidatingWebhooks,
  WebhookCertificate,
  WebhookCheck,
  webhookCheckEnabled,
  WebhookService,
} from '../../constructs';

export interface TemplateFile {
  /** File name under templates/. */
  readonly file: string;
  /** Whole-file condition; absent means always rendered. */
  readonly condition?: Condition;
  /** Helm hooks only: plain renderings (deploy/ bundles, custom builds) have no hook runner. */
  readonly helmOnly?: boolean;
  /**
   * Rendered once per namespace of a list (a `range` in the chart); `build` then gets that
   * namespace. `watched`: `watchNamespaces` other than the release namespace. `gateway`: the
   * namespaces of the external and internal endpoints' Gateways.
   */
  readonly perNamespace?: 'watched' | 'gateway';
  /** Adds the file's constructs. */
  readonly build: (scope: Construct, context: RenderContext, namespace?: string) => void;
}

export const TEMPLATE_FILES: readonly TemplateFile[] = [
  { file: 'namespace.yaml', condition: cond.truthy('namespace.create'), build: (s, context) => new ReleaseNamespace(s, 'namespace', { context }) },
  { file: 'serviceaccount.yaml', condition: cond.truthy('serviceAccount.create'), build: (s, context) => new OperatorServiceAccount(s, 'sa', { context }) },
  { file: 'rbac.yaml', build: (s, context) => new OperatorRbac(s, 'rbac', { context }) },
  { file: 'rbac-agent-namespaces.yaml', perNamespace: 'watched', build: (s, context, namespace) => new AgentNamespaceRbac(s, 'rbac-agents', { context, namespace: namespace! }) },
  {
    file: 'rbac-gateway-namespaces.yaml',
    condition: cond.truthy('platform.proxyStatus'),
    perNamespace: 'gateway',
    build: (s, context, namespace) => new GatewayNamespaceRbac(s, 'rbac-gateways', { context, namespace: namespace! }),
  },
  { file: 'user-roles.yaml', condition: cond.truthy('rbac.userFacingRoles'), build: (s, context) => new UserFacingRoles(s, 'user-roles', { context }) },
  { file: 'deployment.yaml', build: (s, context) => new OperatorDeployment(s, 'deployment', { context }) },
  { file: 'poddisruptionbudget.yaml', condition: multipleReplicas, build: (s, context) => new OperatorPodDisruptionBudget(s, 'pdb', { context }) },
  { file: 'metrics-service.yaml', build: (s, context) => new OperatorMetricsService(s, 'metrics', { context }) },
  { file: 'webhook-service.yaml', build: (s, context) => new WebhookService(s, 'webhook', { context }) },
  { file: 'validating-webhook-configuration.yaml', build: (s, context) => new ValidatingWebhooks(s, 'validating', { context }) },
  { file: 'mutating-webhook-configuration.yaml', build: (s, context) => new MutatingWebhooks(s, 'mutating', { context }) },
  { file: 'agentdeployment-upgrade-guard.yaml', condition: upgradeGuardEnabled, build: (s, context) => new AgentDeploymentUpgradeGuard(s, 'guard', { context }) },
  { file: 'webhook-check.yaml', condition: webhookCheckEnabled, helmOnly: true, build: (s, context) => new WebhookCheck(s, 'check', { context }) },
  { file: 'issuer.yaml', condition: createsIssuer, build: (s, context) => new SelfSignedIssuer(s, 'issuer', { context }) },
  { file: 'certificate.yaml', condition: certManagerMode, build: (s, context) => new WebhookCertificate(s, 'certificate', { context }) },
  { file: 'key-audit-policy.yaml', build: (s, context) => new KeyAuditPolicy(s, 'key-audit', { context }) },
  { file: 'networkpolicy.yaml', condition: cond.truthy('networkPolicy.enabled'), build: (s, context) => new OperatorNetworkPolicy(s, 'netpol', { context }) },
  { file: 'servicemonitor.yaml', condition: cond.truthy('serviceMonitor.enabled'), build: (s, context) => new OperatorServiceMonitor(s, 'sm', { context }) },
  { file: 'prometheusrule.yaml', condition: cond.truthy('prometheusRule.enabled'), build: (s, context) => new AlertRules(s, 'alerts', { context }) },
  { file: 'grafana-dashboards.yaml', condition: cond.truthy('grafanaDashboards.enabled'), build: (s, context) => new GrafanaDashboards(s, 'dashboards', { context }) },
  { file: 'prometheusrule-spend.yaml', condition: cond.truthy('pricing.models'), build: (s, context) => new SpendRules(s, 'spend', { context }) },
  { file: 'gatewayclass.yaml', condition: cond.truthy('gateway.gatewayClass.create'), build: (s, context) => new GatewayClass(s, 'gatewayclass', { context }) },
  { file: 'gateway.yaml', condition: cond.truthy('gateway.gateway.create'), build: (s, context) => new Gateway(s, 'gateway', { context }) },
  { file: 'gatewayconfig.yaml', condition: cond.truthy('gateway.gatewayConfig.create'), build: (s, context) => new AIGatewayConfig(s, 'gatewayconfig', { context }) },
  {
    file: 'clienttrafficpolicy.yaml',
    condition: cond.truthy('gateway.clientTrafficPolicy.create'),
    build: (s, context) => new GatewayClientTrafficPolicy(s, 'ctp', { context }),
  },
  { file: 'portal-rbac.yaml', condition: portalEnabled, build: (s, context) => new PortalServiceAccount(s, 'portal-sa', { context }) },
  { file: 'portal-write-policy.yaml', condition: portalEnabled, build: (s, context) => new PortalWritePolicy(s, 'portal-writes', { context }) },
  { file: 'portal-deployment.yaml', condition: portalEnabled, build: (s, context) => new PortalDeployment(s, 'portal', { context }) },
  { file: 'portal-service.yaml', condition: portalEnabled, build: (s, context) => new PortalService(s, 'portal-service', { context }) },
  { file: 'portal-httproute.yaml', condition: portalEnabled, build: (s, context) => new PortalHttpRoute(s, 'portal-route', { context }) },
  { file: 'portal-networkpolicy.yaml', condition: portalNetworkPolicyEnabled, build: (s, context) => new PortalNetworkPolicy(s, 'portal-netpol', { context }) },
  {
    file: 'portal-servicemonitor.yaml',
    condition: cond.and(portalEnabled, cond.truthy('serviceMonitor.enabled')),
    build: (s, context) => new PortalServiceMonitor(s, 'portal-sm', { context }),
  },
  { file: 'portal-poddisruptionbudget.yaml', condition: portalMultipleReplicas, build: (s, context) => new PortalPodDisruptionBudget(s, 'portal-pdb', { context }) },
];

/** Synthesizes one template file's objects in memory. */
export function synthesizeTemplate(template: TemplateFile, context: RenderContext, namespace?: string): Record<string, unknown>[] {
  const app = new App();
  const chart = new Chart(app, template.file.replace(/\W/g, '-'));
  template.build(chart, context, namespace);
  return chart.toJson() as Record<string, unknown>[];
}
