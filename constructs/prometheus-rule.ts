// The optional PrometheusRule holding the alerts of constructs/alert-rules.ts, for a Prometheus run
// by the Prometheus Operator (kube-prometheus-stack). Written with a small typed interface of our
// own rather than a `cdk8s import` class: the object is a name, labels and a list of rule groups,
// the PrometheusRule CRD is not among the upstream CRDs imports/ is generated from, and the tests
// check the object against the real CRD (pinned in tools/prometheus-operator-crds) instead.
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { ALERT_RULES, type AlertRule, type AlertScope } from './alert-rules';
import { objectLabels } from './labels';
import { objectNames } from './names';
import { OPERATOR_COMPONENT } from './operator';
import { helmValue, RenderContext } from './render-context';

/** monitoring.coreos.com/v1 PrometheusRule, as far as this chart fills it. */
export interface PrometheusRuleObject {
  readonly apiVersion: 'monitoring.coreos.com/v1';
  readonly kind: 'PrometheusRule';
  readonly metadata: { readonly name: string; readonly namespace: string; readonly labels: Record<string, string> };
  readonly spec: { readonly groups: readonly { readonly name: string; readonly rules: readonly AlertingRule[] }[] };
}

export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

/** The rule group's name (one group: Prometheus evaluates it at its global interval). */
export const ALERT_GROUP = 'nebari-llm-serving';

export interface AlertRulesProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

export class AlertRules extends Construct {
  constructor(scope: Construct, id: string, props: AlertRulesProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    const rule: PrometheusRuleObject = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: {
        name: names.prometheusRule,
        namespace: ctx.namespace,
        labels: { ...objectLabels(ctx, OPERATOR_COMPONENT), ...ctx.merge('prometheusRule.labels') },
      },
      spec: { groups: [{ name: ALERT_GROUP, rules: ALERT_RULES.map((a) => alertingRule(ctx, a)) }] },
    };
    new ApiObject(this, 'Resource', rule);
  }
}

function alertingRule(ctx: RenderContext, a: AlertRule): AlertingRule {
  const names = objectNames(ctx);
  const at = `prometheusRule.alerts.${a.key}`;
  const scope: AlertScope = {
    // `job` is the scraped Service's name, as the Prometheus Operator labels ServiceMonitor targets.
    operator: `job="${names.metricsService}", namespace="${ctx.namespace}"`,
    portal: `job="${names.portal}", namespace="${ctx.namespace}"`,
    window: helmValue<string>(ctx.value('prometheusRule.rateWindow')),
    threshold: a.threshold ? `${helmValue<string>(ctx.value(`${at}.threshold`))}` : '',
  };
  return {
    alert: a.alert,
    expr: a.expr(scope),
    for: helmValue<string>(ctx.value(`${at}.for`)),
    labels: { severity: a.severity },
    annotations: {
      summary: prometheusTemplate(ctx, a.summary),
      description: prometheusTemplate(ctx, a.description),
      runbook_url: `${helmValue<string>(ctx.value('prometheusRule.runbookBaseURL'))}/${a.alert}.md`,
    },
  };
}

/**
 * Text with Prometheus's own `{{ ... }}` templating: in the chart it is a Go string literal inside
 * a Helm action, so Helm prints it as written instead of evaluating it.
 */
function prometheusTemplate(ctx: RenderContext, text: string): string {
  if (!text.includes('{{')) return text;
  return helmValue<string>(ctx.expression(`${JSON.stringify(text)} | quote`, () => text));
}
