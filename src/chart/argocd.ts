// examples/argocd-application.yaml: an Argo CD Application installing the chart from OCI.
import { stringify } from 'yaml';
import { CHART_NAME } from '../../constructs';
import { version } from '../version';
import { DEFAULT_NAMESPACE, DEFAULT_RELEASE_NAME } from './render';

/** Registry host and path of the published chart (Argo CD takes OCI repos without `oci://`). */
export const OCI_REPOSITORY = 'registry.example.com/nebari/charts';

export function argoCdApplication(): Record<string, unknown> {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: CHART_NAME,
      namespace: 'argocd',
      // After the gateway stack (CRDs and controllers) in earlier waves.
      annotations: { 'argocd.argoproj.io/sync-wave': '7' },
      finalizers: ['resources-finalizer.argocd.argoproj.io'],
    },
    spec: {
      project: 'default',
      source: {
        repoURL: OCI_REPOSITORY,
        chart: CHART_NAME,
        targetRevision: version,
        // Argo CD creates the namespace (CreateNamespace=true below); models need no namespace label.
        helm: { releaseName: DEFAULT_RELEASE_NAME },
      },
      destination: { server: 'https://kubernetes.default.svc', namespace: DEFAULT_NAMESPACE },
      // The operator or cert-manager injects caBundle; never treat it as drift.
      ignoreDifferences: [
        { group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration', jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle'] },
        { group: 'admissionregistration.k8s.io', kind: 'MutatingWebhookConfiguration', jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle'] },
      ],
      syncPolicy: {
        automated: { prune: true, selfHeal: true, allowEmpty: false },
        // Server-side apply: large CRDs exceed the client-side last-applied annotation limit.
        syncOptions: ['CreateNamespace=true', 'ServerSideApply=true', 'RespectIgnoreDifferences=true'],
        retry: { limit: 5, backoff: { duration: '5s', factor: 2, maxDuration: '3m' } },
      },
    },
  };
}

export function argoCdApplicationYaml(): string {
  return stringify(argoCdApplication(), { lineWidth: 0 });
}
