// The upstream side of a PassthroughModel: where the provider is (Backend), how TLS to it is
// verified (BackendTLSPolicy), which API it speaks (AIServiceBackend) and which credential the
// gateway sends (BackendSecurityPolicy). Routes and client auth are shared with LLMModel.
import { gatewayMetadata, ModelIdentity } from './labels';
import { gatewayObjectNames } from './names';
import {
  AI_GATEWAY_API_VERSION,
  AIServiceBackend,
  Backend,
  BackendSecurityPolicy,
  BackendTLSPolicy,
  ENVOY_GATEWAY_API_VERSION,
  GATEWAY_API_VERSION,
} from './objects';
import type { ResolvedProvider } from './provider';

/** Envoy Gateway Backend: one FQDN endpoint, the provider's host and port. */
export function providerBackend(model: ModelIdentity, provider: ResolvedProvider): Backend {
  const names = gatewayObjectNames(model.metadata.name ?? '');
  return {
    apiVersion: ENVOY_GATEWAY_API_VERSION,
    kind: 'Backend',
    metadata: gatewayMetadata(model, names.backend),
    spec: {
      type: 'Endpoints',
      endpoints: [{ fqdn: { hostname: provider.hostname, port: provider.port } }],
    },
  };
}

/**
 * TLS to the provider, with the provider host as SNI and as the name checked in its certificate,
 * verified against the CAs of `caConfigMap` (its `ca.crt`) when the platform names one, else the
 * proxies' system CA bundle. Envoy Gateway sends a ConfigMap's CAs inline; the system bundle by
 * file name, which Envoy watches once per policy. `gateway.networking.k8s.io/v1`, which both the
 * standard and experimental Gateway API channels serve.
 */
export function providerBackendTLSPolicy(model: ModelIdentity, provider: ResolvedProvider, caConfigMap?: string): BackendTLSPolicy {
  const names = gatewayObjectNames(model.metadata.name ?? '');
  const trust = caConfigMap ? { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: caConfigMap }] as const } : { wellKnownCACertificates: 'System' as const };
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: 'BackendTLSPolicy',
    metadata: gatewayMetadata(model, names.backendTLSPolicy),
    spec: {
      targetRefs: [{ group: 'gateway.envoyproxy.io', kind: 'Backend', name: names.backend }],
      validation: { hostname: provider.hostname, ...trust },
    },
  };
}

/**
 * The provider's API schema, pointing at the Backend. Routes reference this object by name.
 * The client-ID header (`clientIDHeader`, set by the external endpoint's API-key check and read by
 * its authorization and quotas) names the user who minted the key, so it is removed before the
 * request leaves for a third-party provider: the AI Gateway's upstream filter applies the removal
 * after authorization and rate limiting have read it. LLMModels (in-cluster) keep it.
 */
export function providerAIServiceBackend(model: ModelIdentity, provider: ResolvedProvider, clientIDHeader: string): AIServiceBackend {
  const names = gatewayObjectNames(model.metadata.name ?? '');
  return {
    apiVersion: AI_GATEWAY_API_VERSION,
    kind: 'AIServiceBackend',
    metadata: gatewayMetadata(model, names.aiServiceBackend),
    spec: {
      schema: provider.schema,
      backendRef: { group: 'gateway.envoyproxy.io', kind: 'Backend', name: names.backend },
      headerMutation: { remove: [clientIDHeader.toLowerCase()] },
    },
  };
}

/** The credential the gateway adds to upstream requests (never seen by callers). */
export function providerBackendSecurityPolicy(model: ModelIdentity, provider: ResolvedProvider): BackendSecurityPolicy {
  const names = gatewayObjectNames(model.metadata.name ?? '');
  const { credential } = provider;
  const targetRefs = [{ group: 'aigateway.envoyproxy.io', kind: 'AIServiceBackend', name: names.aiServiceBackend }];
  const metadata = gatewayMetadata(model, names.backendSecurityPolicy);
  const base = { apiVersion: AI_GATEWAY_API_VERSION, kind: 'BackendSecurityPolicy', metadata } as const;
  if (credential.type === 'AWSCredentials') {
    // No credentialsFile: the AWS default chain (pod identity / IRSA of the gateway) signs requests.
    return { ...base, spec: { targetRefs, type: 'AWSCredentials', awsCredentials: { region: credential.region } } };
  }
  const secretRef = { group: '', kind: 'Secret', name: credential.secretName } as const;
  switch (credential.type) {
    case 'APIKey':
      return { ...base, spec: { targetRefs, type: 'APIKey', apiKey: { secretRef } } };
    case 'AnthropicAPIKey':
      return { ...base, spec: { targetRefs, type: 'AnthropicAPIKey', anthropicAPIKey: { secretRef } } };
    case 'AzureAPIKey':
      return { ...base, spec: { targetRefs, type: 'AzureAPIKey', azureAPIKey: { secretRef } } };
  }
}
