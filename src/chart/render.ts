// The two renderings of TEMPLATE_FILES: Helm template text (placeholders) and plain objects
// (concrete values) for the deploy/ bundles and custom builds.
import { conditionExpression, evaluateCondition, fullname, HelmRenderContext, PlainRenderContext, CHART_NAME } from '../../constructs';
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
    const objects = synthesizeTemplate(t, ctx);
    out[t.file] = templateText(objects, ctx.placeholders, t.condition && conditionExpression(t.condition));
  }
  return out;
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
    out[t.file] = synthesizeTemplate(t, ctx);
  }
  return out;
}

export function plainObjects(values: ChartValues, release: PlainRelease = {}, withHooks = false): Record<string, unknown>[] {
  return Object.values(plainObjectsByFile(values, release, withHooks)).flat();
}
