// Starts the real webhook server in this process against a (shared or private) kube-apiserver
// and registers it by URL on 127.0.0.1 (never through a Service), scoped by a namespace label so
// test files sharing the control plane do not see each other's webhooks.
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { type WebhookServer, type WebhookServerOptions, startWebhookServer } from '../../../src/webhook';
import type { Logger } from '../../../src/webhook/log';
import { collectionPath, kubeRequest } from './kube-raw';
import { repoRoot } from '../tools';

export const crdDirectory = path.join(repoRoot, 'crds');
export const selectorLabel = 'webhook-test.llm.nebari.dev/suite';

const kinds = [
  { kind: 'LLMModel', plural: 'llmmodels', resource: 'llmmodel' },
  { kind: 'PassthroughModel', plural: 'passthroughmodels', resource: 'passthroughmodel' },
  { kind: 'AgentDeployment', plural: 'agentdeployments', resource: 'agentdeployment' },
] as const;

export interface WebhookEnvironment {
  readonly id: string;
  /** The operator namespace (labelled nebari.dev/managed=true). */
  readonly operatorNamespace: string;
  readonly secretName: string;
  readonly validatingName: string;
  readonly mutatingName: string;
  readonly server: WebhookServer;
  /** Paths the server was called on, in order (from its debug log). */
  readonly calls: string[];
  close(): Promise<void>;
}

/** A logger that records admission calls and keeps warnings and errors visible. */
export function recordingLogger(calls: string[]): Logger {
  return {
    debug: (msg, fields) => {
      if (msg === 'admission' && typeof fields?.path === 'string') calls.push(fields.path);
    },
    info: () => undefined,
    warn: (msg, fields) => console.warn(msg, fields),
    error: (msg, fields) => console.error(msg, fields),
  };
}

export async function createNamespace(kubeConfig: k8s.KubeConfig, name: string, labels: Record<string, string>): Promise<void> {
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name, labels } } });
}

export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Webhook entries calling `https://127.0.0.1:<port>/<purpose>-<kind>`, limited to the suite's namespaces. */
export function webhookEntries(purpose: 'validate' | 'mutate', port: number, id: string, only?: readonly string[]) {
  return kinds
    .filter((k) => !only || only.includes(k.kind))
    .map((k) => ({
      name: `${purpose}-${k.resource}.${id}.test.llm.nebari.dev`,
      admissionReviewVersions: ['v1'],
      clientConfig: { url: `https://127.0.0.1:${port}/${purpose}-${k.resource}` },
      failurePolicy: 'Fail',
      sideEffects: 'None',
      timeoutSeconds: 10,
      // As the chart: registered for v1beta1, v1alpha1 writes reach the webhook converted.
      matchPolicy: 'Equivalent',
      namespaceSelector: { matchLabels: { [selectorLabel]: id } },
      rules: [{ apiGroups: ['llm.nebari.dev'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: [k.plural], scope: 'Namespaced' }],
      ...(purpose === 'mutate' ? { reinvocationPolicy: 'Never' } : {}),
    }));
}

export interface StartOptions {
  readonly kubeConfig: k8s.KubeConfig;
  readonly id: string;
  readonly server?: Partial<Omit<WebhookServerOptions, 'kubeConfig'>>;
  /** Register the configurations (default true). */
  readonly register?: boolean;
}

/** Operator namespace, webhook server (self-managed certificates) and both configurations. */
export async function startWebhookEnvironment(options: StartOptions): Promise<WebhookEnvironment> {
  const { kubeConfig, id } = options;
  const operatorNamespace = `${id}-system`;
  const secretName = `${id}-webhook-server-cert`;
  const validatingName = `${id}-validating`;
  const mutatingName = `${id}-mutating`;
  await createNamespace(kubeConfig, operatorNamespace, { 'nebari.dev/managed': 'true', [selectorLabel]: id });
  const calls: string[] = [];
  const server = await startWebhookServer({
    kubeConfig,
    env: { POD_NAMESPACE: operatorNamespace, NLS_RELEASE_NAME: id, NLS_WATCH_NAMESPACES: `${id}-team` },
    host: '127.0.0.1',
    extraIpAddresses: ['127.0.0.1'],
    checkIntervalMs: 300,
    log: recordingLogger(calls),
    ...options.server,
    settings: { port: 0, secretName, webhookConfigurations: { validating: [validatingName], mutating: [mutatingName] }, ...options.server?.settings },
  });
  const admission = kubeConfig.makeApiClient(k8s.AdmissionregistrationV1Api);
  if (options.register !== false) {
    await admission.createValidatingWebhookConfiguration({
      body: { metadata: { name: validatingName }, webhooks: webhookEntries('validate', server.port, id) as k8s.V1ValidatingWebhook[] },
    });
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name: mutatingName }, webhooks: webhookEntries('mutate', server.port, id) as k8s.V1MutatingWebhook[] },
    });
    // The CA arrives through the server's own injection loop, which is part of what is tested.
    await waitUntil('the webhook server to be ready', () => server.ready());
    await waitUntilApiServerCalls(kubeConfig, operatorNamespace);
  }
  return {
    id,
    operatorNamespace,
    secretName,
    validatingName,
    mutatingName,
    server,
    calls,
    async close() {
      await admission.deleteValidatingWebhookConfiguration({ name: validatingName }).catch(() => undefined);
      await admission.deleteMutatingWebhookConfiguration({ name: mutatingName }).catch(() => undefined);
      await server.close();
    },
  };
}

/**
 * Waits until the API server itself reaches the webhook (its informer has loaded the injected
 * caBundle): a dry-run create answers anything but a failed webhook call.
 */
export async function waitUntilApiServerCalls(kubeConfig: k8s.KubeConfig, namespace: string): Promise<void> {
  const probe = {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'probe' },
    spec: { model: { name: 'probe', source: 'huggingface' }, resources: { gpu: { count: 0 } }, access: { public: true } },
  };
  let last = '';
  await waitUntil(
    'the API server to call the webhook',
    async () => {
      const response = await kubeRequest(kubeConfig, 'POST', `${collectionPath(namespace, 'llmmodels', 'v1beta1')}?dryRun=All`, probe);
      last = `${response.status} ${String(response.body.message ?? '')}`;
      return response.status < 500;
    },
    30_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; last answer: ${last}`);
  });
}

/** A copy of `kubeConfig` whose requests impersonate `user`. */
export function impersonating(kubeConfig: k8s.KubeConfig, user: string): k8s.KubeConfig {
  const current = kubeConfig.getCurrentUser()!;
  const cluster = kubeConfig.getCurrentCluster()!;
  const out = new k8s.KubeConfig();
  out.loadFromOptions({
    clusters: [cluster],
    users: [{ ...current, name: `as-${user}`, impersonateUser: user }],
    contexts: [{ name: `as-${user}`, cluster: cluster.name, user: `as-${user}` }],
    currentContext: `as-${user}`,
  });
  return out;
}
