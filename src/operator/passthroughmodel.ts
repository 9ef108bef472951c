// PassthroughModel reconciler: fetch → (finalize on delete) → finalizer + API-key objects →
// gateway objects from desiredGatewayObjects → status. Apply failures do not abort the pass;
// they become conditions (CredentialResolved, BackendConfigured, ExternalEndpointReady,
// InternalEndpointReady) and a requeue.
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { CREDENTIAL_SECRET_KEY, PASSTHROUGHMODEL_KIND } from '../api/passthroughmodel';
import { resolvePassthroughProvider } from '../translate/gateway/provider';
import { gatewayObjectKinds } from '../translate/gateway/objects';
import { KeyObjectCache } from './key-object-cache';
import { CredentialSecrets, secretEntries } from './credential-secrets';
import { ExternalEndpointPeers } from './endpoint-peers';
import { ProviderCABundle } from './provider-ca-bundle';
import { ProxyStatus } from './proxy-status';
import { objectKey } from './runtime/object-key';
import { finalizeModel, generatedObjectWatches, publishModel, revokeDueKeysUnpublished, type PublishWatches } from './model-shared';
import { ReconcileDeps, recordTransitions, reportNotConfigured, requeue, writeStatus } from './reconcile-context';
import { ConditionInput } from './runtime/conditions';
import { ControllerOptions, ReconcileRequest, ReconcileResult } from './runtime/controller';
import { addFinalizer, hasFinalizer, isBeingDeleted } from './runtime/finalizer';
import { KubeObject, objectRef } from '../kube/rest';
import { Logger } from '../runtime/log';
import type { PassthroughModelV1beta1 } from '../api/v1beta1';

type PassthroughModelObject = PassthroughModelV1beta1 & KubeObject;

/**
 * CredentialResolved: does the provider credential Secret exist with its `apiKey` entry? Read from
 * the credential watch's cache when it has listed, else asked of the server; a value is never read out.
 */
async function credentialCondition(deps: ReconcileDeps, model: PassthroughModelObject, credentials?: CredentialSecrets): Promise<ConditionInput> {
  const namespace = model.metadata.namespace!;
  const provider = resolvePassthroughProvider(model.spec);
  const credential = provider.ok ? provider.value.credential : undefined;
  // Recorded before the read, so a Secret created in between still brings the model back.
  credentials?.reference(objectKey(namespace, model.metadata.name), namespace, credential?.type === 'AWSCredentials' ? undefined : credential?.secretName);
  if (!credential) return { type: 'CredentialResolved', status: 'Unknown', reason: 'BuildFailed', message: 'the provider settings are invalid; see BackendConfigured' };
  if (credential.type === 'AWSCredentials') {
    return { type: 'CredentialResolved', status: true, reason: 'WorkloadIdentity', message: `the gateway signs requests with its AWS workload identity for region ${credential.region}` };
  }
  let entries = credentials?.entries(namespace, credential.secretName);
  if (entries === undefined) {
    const secret = await deps.client.get<KubeObject>(objectRef('v1', 'Secret', credential.secretName, namespace));
    entries = secret ? secretEntries(secret).entries : null;
  }
  if (entries === null) {
    return { type: 'CredentialResolved', status: false, reason: 'SecretNotFound', message: `Secret ${credential.secretName} (spec.provider.credential.secretRef.name) does not exist in namespace ${namespace}; create it with the provider API key under key "${CREDENTIAL_SECRET_KEY}"` };
  }
  if (!entries.includes(CREDENTIAL_SECRET_KEY)) {
    return { type: 'CredentialResolved', status: false, reason: 'APIKeyMissing', message: `Secret ${credential.secretName} has no "${CREDENTIAL_SECRET_KEY}" entry; add the provider API key under that key` };
  }
  return { type: 'CredentialResolved', status: true, reason: 'Resolved', message: `Secret ${credential.secretName} holds the provider API key` };
}

/** The watches of a PassthroughModel pass: the publishing ones, and the provider CA ConfigMap's (with platform.providerTLS.caConfigMap). */
export type PassthroughWatches = PublishWatches & { providerCA?: ProviderCABundle };

/**
 * `credentials`: the controller's credential Secret watch (without it, the Secret is read from the
 * server); likewise `watches.providerCA` for the provider CA ConfigMap.
 */
export async function reconcilePassthroughModel(deps: ReconcileDeps, req: ReconcileRequest, log: Logger, credentials?: CredentialSecrets, watches: PassthroughWatches = {}): Promise<ReconcileResult> {
  const ref = objectRef(API_GROUP_VERSION_V1BETA1, PASSTHROUGHMODEL_KIND, req.name, req.namespace);
  const key = objectKey(req.namespace, req.name);
  // The informer's copy when it has one (no GET per pass); a miss is asked of the server.
  let model = (req.cached as PassthroughModelObject | undefined) ?? (await deps.client.get<PassthroughModelObject>(ref));
  if (!model) {
    credentials?.reference(key, req.namespace, undefined);
    watches.providerCA?.reference(key, false);
    return {};
  }
  model = { ...model, apiVersion: API_GROUP_VERSION_V1BETA1, kind: PASSTHROUGHMODEL_KIND };
  const d = { ...deps, log };

  if (isBeingDeleted(model)) {
    if (!hasFinalizer(model)) return {};
    const wait = await finalizeModel(d, model, watches.keyObjects);
    return wait ? { requeueAfterMs: wait } : {};
  }
  if (deps.configurationProblem) {
    // Nothing is published, but keys that expire (or lose access) are still removed.
    const keysWait = await revokeDueKeysUnpublished(d, model, watches.keyObjects);
    const result = await reportNotConfigured(d, model, deps.configurationProblem);
    return keysWait === undefined ? result : { ...result, requeueAfterMs: keysWait };
  }
  // The finalizer goes on before anything is created, so nothing can outlive the model.
  model = await addFinalizer(deps.client, model);

  const credential = await credentialCondition(d, model, credentials);
  const published = await publishModel(d, model, {}, watches);
  const provider = resolvePassthroughProvider(model.spec);
  // Recorded before the read, so a ConfigMap fixed in between still brings the model back.
  const caConfigMap = deps.gateway.providerTLS?.caConfigMap;
  const caBundle = watches.providerCA ?? (caConfigMap ? new ProviderCABundle(caConfigMap) : undefined);
  caBundle?.reference(key, true);
  const caProblem = published.ok ? await caBundle?.problem(deps.client, req.namespace) : undefined;
  const backend: ConditionInput = !published.ok
    ? { type: 'BackendConfigured', status: false, reason: published.summary.reason, message: published.summary.message }
    : (caProblem ?? { type: 'BackendConfigured', status: true, reason: 'Applied', message: `backend ${provider.ok ? `${provider.value.hostname}:${provider.value.port}` : ''} configured; ${published.summary.message}` });
  // Published, but the provider's requests fail until the credential or the CAs are there.
  const phase = published.ok ? (credential.status === false || caProblem ? 'Degraded' : 'Ready') : 'Error';
  const changed = await writeStatus(deps.client, model, {
    phase,
    conditions: [credential, backend, ...published.conditions],
    extra: {
      endpoints: published.endpoints,
      ...(provider.ok ? { provider: { backendType: provider.value.backendType, hostname: provider.value.hostname, port: provider.value.port } } : {}),
    },
  });
  await recordTransitions(deps.events, model, changed);

  // A missing credential or CA ConfigMap is polled for only without its watch (which brings the model back itself).
  const delays = [
    published.requeueAfterMs,
    credential.status === false && !credentials ? requeue.dependencyMissing : undefined,
    caProblem && !watches.providerCA ? requeue.dependencyMissing : undefined,
  ].filter((n): n is number => n !== undefined);
  return delays.length ? { requeueAfterMs: Math.min(...delays) } : {};
}

/**
 * Controller wiring: the kind, the API-key Secrets whose changes re-render the SecurityPolicy, the
 * provider credential Secrets, the models on the external endpoint (both kinds), and the
 * generated gateway objects.
 */
export function passthroughModelController(deps: ReconcileDeps, namespace: string): ControllerOptions {
  // Models live in the operator namespace only (the webhook admits them nowhere else): list and
  // watch there, with the namespaced rights the chart grants.
  const credentials = new CredentialSecrets();
  const peers = new ExternalEndpointPeers(PASSTHROUGHMODEL_KIND);
  const proxyStatus = new ProxyStatus(deps.client, PASSTHROUGHMODEL_KIND, deps.gateway);
  const keyObjects = new KeyObjectCache(PASSTHROUGHMODEL_KIND);
  const caConfigMap = deps.gateway.providerTLS?.caConfigMap;
  const providerCA = caConfigMap ? new ProviderCABundle(caConfigMap) : undefined;
  return {
    apiVersion: API_GROUP_VERSION_V1BETA1,
    kind: PASSTHROUGHMODEL_KIND,
    namespace,
    reconcile: (req, log) => reconcilePassthroughModel(deps, req, log, credentials, { peers, proxyStatus, keyObjects, providerCA }),
    secondary: [
      keyObjects.secretWatch(namespace),
      keyObjects.metadataWatch(namespace),
      credentials.watch(namespace),
      ...(providerCA ? [providerCA.watch(namespace)] : []),
      ...peers.watches(namespace),
      ...proxyStatus.watches(namespace),
      ...generatedObjectWatches(
        PASSTHROUGHMODEL_KIND,
        gatewayObjectKinds('AIGatewayRoute', 'SecurityPolicy', 'AIServiceBackend', 'BackendSecurityPolicy', 'Backend', 'BackendTLSPolicy', 'BackendTrafficPolicy'),
      ),
    ],
  };
}
