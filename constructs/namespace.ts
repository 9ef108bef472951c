// The optional release Namespace (`namespace.create`, off by default: Helm users pass
// --create-namespace; the plain-manifest bundles include it because kubectl has no such flag).
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { kubeObject } from './kube-object';
import { clusterMeta } from './labels';
import { RenderContext } from './render-context';

export interface ReleaseNamespaceProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

/** The release Namespace, labelled `nebari.dev/managed: "true"` (informational; the webhooks do not require it). */
export class ReleaseNamespace extends Construct {
  constructor(scope: Construct, id: string, props: ReleaseNamespaceProps) {
    super(scope, id);
    const ctx = props.context;
    // `helm uninstall` must not delete the namespace: it holds every model and its API-key Secrets.
    const meta = clusterMeta(ctx, ctx.namespace, 'namespace', { annotations: { 'helm.sh/resource-policy': 'keep' } });
    kubeObject(k8s.KubeNamespace, this, 'Resource', {
      metadata: { ...meta, labels: { ...meta.labels, 'nebari.dev/managed': 'true', ...ctx.merge('namespace.labels') } },
    });
  }
}
