// Standard labels for every object, and the smaller selector set that must never change.
import { version } from '../src/version';
import { CHART_NAME } from './helpers';
import { helmValue, RenderContext } from './render-context';

/** Labels that select one component's pods (immutable in a Deployment selector). */
export function selectorLabels(ctx: RenderContext, component: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': CHART_NAME,
    'app.kubernetes.io/instance': ctx.releaseName,
    'app.kubernetes.io/component': component,
  };
}

/** Labels for an object's metadata: selector labels, version, chart and the user's commonLabels. */
export function objectLabels(ctx: RenderContext, component: string): Record<string, string> {
  return {
    ...selectorLabels(ctx, component),
    'app.kubernetes.io/part-of': CHART_NAME,
    // From Chart.yaml in Helm, so `helm package --version/--app-version` relabels everything.
    'app.kubernetes.io/version': helmValue<string>(ctx.expression('.Chart.AppVersion | quote', () => version)),
    'helm.sh/chart': helmValue<string>(ctx.expression('printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | quote', () => `${CHART_NAME}-${version.replace(/\+/g, '_')}`)),
    // Helm sets this itself; plain bundles are applied by kubectl or Argo CD, which track their own.
    ...(ctx.mode === 'helm' ? { 'app.kubernetes.io/managed-by': helmValue<string>(ctx.expression('.Release.Service', () => 'Helm')) } : {}),
    ...ctx.merge('commonLabels'),
  };
}

/** `metadata` for a namespaced object in the release namespace. */
export function namespacedMeta(ctx: RenderContext, name: string, component: string, extra: Record<string, unknown> = {}) {
  return { name, namespace: ctx.namespace, labels: objectLabels(ctx, component), ...extra };
}

/** `metadata` for a cluster-scoped object (its name must include the release's full name). */
export function clusterMeta(ctx: RenderContext, name: string, component: string, extra: Record<string, unknown> = {}) {
  return { name, labels: objectLabels(ctx, component), ...extra };
}
