// The two renderings of TEMPLATE_FILES: Helm template text (placeholders) and plain objects
// (concrete values) for the deploy/ bundles and custom builds.
import { conditionExpression, evaluateCondition, fullname, HelmRenderContext, type Placeholder, PlainRenderContext, CHART_NAME } from '../../constructs';
import { TEMPLATE_FILES, synthesizeTemplate } from './layout';
import { templateText } from './template-writer';
import { ChartValues } from './values-schema';

export const DEFAULT_RELEASE_NAME = CHART_NAME;
export const DEFAULT_NAMESPACE = 'nebari-llm-serving-system';

/** `templates/<file>` → template text. */
export function helmTemplates(): Record<string, string> {
  const ctx = new HelmRenderContext(CHART_NAME);
  const out: Record<string, string> = {};
  for (const t of TEMPLATE_FILES) {
    if (t.perNamespace) {
      // Inside `range` the dot is the list item, so every expression of the file uses the root `$`.
      const objects = synthesizeTemplate(t, ctx, ctx.expression(`$${RANGE_VARIABLE}`) as string);
      const body = templateText(objects, ctx.placeholders.map(rootScoped));
      const ranged = t.perNamespace === 'watched'
        ? `{{- range $${RANGE_VARIABLE} := .Values.watchNamespaces | uniq }}\n{{- if ne $${RANGE_VARIABLE} $.Release.Namespace }}\n${body}{{- end }}\n{{- end }}\n`
        : `{{- range $${RANGE_VARIABLE} := list .Values.platform.external.gatewayNamespace .Values.platform.internal.gatewayNamespace | uniq }}\n${body}{{- end }}\n`;
      out[t.file] = t.condition ? `{{- if ${conditionExpression(t.condition)} }}\n${ranged}{{- end }}\n` : ranged;
      continue;
    }
    const objects = synthesizeTemplate(t, ctx);
    out[t.file] = templateText(objects, ctx.placeholders, t.condition && conditionExpression(t.condition));
  }
  return out;
}

const RANGE_VARIABLE = 'namespace';

/** The placeholder with `.Values`, `.Release`, `.Chart` and `include … .` taken from the root context. */
export function rootScoped(p: Placeholder): Placeholder {
  const root = (e: string) => e.replace(/(^|[\s(])\.(Values|Release|Chart|Capabilities)\b/g, '$1$$.$2').replace(/(include "[^"]+") \.(?=$|[\s)])/g, '$1 $$');
  return p.kind === 'if' ? { ...p, condition: root(p.condition) } : { ...p, expression: root(p.expression) };
}

/** The namespaces of `watchNamespaces` other than the release namespace, each once. */
export function otherWatchedNamespaces(values: ChartValues, releaseNamespace: string): string[] {
  return [...new Set(values.watchNamespaces)].filter((ns) => ns !== releaseNamespace);
}

/** The namespaces of the endpoints' Gateways, each once. */
export function gatewayNamespaces(values: ChartValues): string[] {
  return [...new Set([values.platform.external.gatewayNamespace, values.platform.internal.gatewayNamespace])];
}

export interface PlainRelease {
  /** Release name. @default nebari-llm-serving */
  readonly releaseName?: string;
  /** Release namespace. @default nebari-llm-serving-system */
  readonly namespace?: string;
}

/**
 * Objects the chart would install with these (fully defaulted) values, per template file. Helm
 * hooks are left out unless `withHooks` (plain bundles have nothing that would run them).
 */
export function plainObjectsByFile(values: ChartValues, release: PlainRelease = {}, withHooks = false): Record<string, Record<string, unknown>[]> {
  const releaseName = release.releaseName ?? DEFAULT_RELEASE_NAME;
  const ctx = new PlainRenderContext(values, releaseName, release.namespace ?? DEFAULT_NAMESPACE, fullname(values, releaseName));
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const t of TEMPLATE_FILES) {
    if ((t.helmOnly && !withHooks) || (t.condition && !evaluateCondition(t.condition, values))) continue;
    if (t.perNamespace) {
      const namespaces = t.perNamespace === 'watched' ? otherWatchedNamespaces(values, ctx.namespace) : gatewayNamespaces(values);
      const objects = namespaces.flatMap((ns) => synthesizeTemplate(t, ctx, ns));
      if (objects.length > 0) out[t.file] = objects;
      continue;
    }
    out[t.file] = synthesizeTemplate(t, ctx);
  }
  return out;
}

export function plainObjects(values: ChartValues, release: PlainRelease = {}, withHooks = false): Record<string, unknown>[] {
  return Object.values(plainObjectsByFile(values, release, withHooks)).flat();
}
