// examples/argocd-application.yaml: an Argo CD Application installing the chart from OCI.
// examples/argocd-gitops-application.yaml: the same, with the values and the models of a custom
// build from a Git repository (docs/custom-builds.md).
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

/** Where the example GitOps repository keeps one release's custom build (docs/custom-builds.md). */
export const GITOPS_REPOSITORY = 'https://git.example.com/platform/gitops.git';
export const GITOPS_RELEASE_PATH = `clusters/prod/${CHART_NAME}`;

/**
 * The chart plus a custom build's files in one Application (several sources, Argo CD 2.6+): the
 * chart with the committed values.yaml, and the directory holding models.yaml. One sync installs
 * the chart (wave 0, CRDs included, so the models' dry run is skipped) and then the models (wave
 * 1, their annotation), once the operator, and with it the webhook, is healthy.
 */
export function argoCdGitOpsApplication(): Record<string, unknown> {
  const app = argoCdApplication() as { metadata: Record<string, unknown>; spec: Record<string, unknown> & { source: Record<string, unknown> } };
  const { project, source, ...rest } = app.spec;
  return {
    ...app,
    spec: {
      project,
      sources: [
        { ...source, helm: { ...(source.helm as object), valueFiles: [`$gitops/${GITOPS_RELEASE_PATH}/values.yaml`] } },
        { repoURL: GITOPS_REPOSITORY, targetRevision: 'main', ref: 'gitops' },
        { repoURL: GITOPS_REPOSITORY, targetRevision: 'main', path: `${GITOPS_RELEASE_PATH}/models` },
      ],
      ...rest,
    },
  };
}

export function argoCdGitOpsApplicationYaml(): string {
  return stringify(argoCdGitOpsApplication(), { lineWidth: 0 });
}
