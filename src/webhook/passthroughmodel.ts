// Admission rules for PassthroughModel that the CRD schema and its CEL rules cannot express:
// placement in the operator's managed namespace, no name shared with an LLMModel, everything the
// operator's provider resolution would reject (so a bad object never reaches the reconciler),
// duplicate model ids, warnings, and defaults that follow from the backend type.
import { PASSTHROUGHMODEL_DEFAULTS, PASSTHROUGHMODEL_KIND } from '../api/passthroughmodel';
import { LLMMODEL_KIND } from '../api/llmmodel';
import { resolvePassthroughProvider } from '../translate/gateway/provider';
import type { AdmissionContext, KindAdmission } from './admission';
import { validateModel } from './model-placement';
import { passthroughRoutingFindings } from './routing';
import { type AdmissionRequest, isRecord } from './review';
import { Findings, type Verdict } from './verdict';
import { passthroughCredentialTypeV1beta1, type PassthroughModelV1beta1 } from '../api/v1beta1';

/** Field-level checks and warnings of one PassthroughModel object (no cluster state). */
export function passthroughModelFieldFindings(model: PassthroughModelV1beta1, findings: Findings): void {
  const { spec } = model;
  const resolved = resolvePassthroughProvider(spec);
  if (!resolved.ok) {
    for (const error of resolved.errors) findings.deny(error.message);
  } else if (spec.provider.hostname !== undefined && spec.provider.hostname !== resolved.value.hostname) {
    findings.warn(
      `spec.provider.hostname: "${spec.provider.hostname}" is used as "${resolved.value.hostname}" (lower case, no trailing dot); write it that way to silence this warning`,
    );
  }

  const seen = new Map<string, number>();
  (spec.models?.declared ?? []).forEach((id, index) => {
    const field = `spec.models.declared[${index}]`;
    if (id.trim() === '') findings.deny(`${field}: the model id is blank; remove it or write the id clients send`);
    else if (id !== id.trim()) findings.deny(`${field}: "${id}" has leading or trailing whitespace; remove it`);
    const first = seen.get(id);
    if (first !== undefined) findings.deny(`${field}: "${id}" is already listed at spec.models.declared[${first}]; remove the duplicate`);
    else seen.set(id, index);
  });

  passthroughRoutingFindings(model.metadata?.name, spec.routing, findings);

  if (spec.provider.port === 80) {
    findings.warn('spec.provider.port: 80 usually serves plain HTTP, but the gateway always connects with TLS; use the provider\'s HTTPS port (443)');
  }
  if (spec.access.public === true && (spec.access.groups?.length ?? 0) > 0) {
    findings.warn('spec.access.groups is ignored because spec.access.public is true; remove the groups or set public: false');
  }
}

export function validatePassthroughModel(request: AdmissionRequest<PassthroughModelV1beta1>, context: AdmissionContext): Promise<Verdict> {
  return validateModel(request, context, { kind: PASSTHROUGHMODEL_KIND, otherKind: LLMMODEL_KIND }, passthroughModelFieldFindings, {
    secrets: (model) => {
      const name = model.spec?.provider?.credential?.secretRef?.name;
      return name ? [{ name, field: 'spec.provider.credential.secretRef.name' }] : [];
    },
    // The gateway sends the key to this host: pointing an existing model elsewhere re-checks it.
    destination: (model) => {
      const provider = model.spec?.provider;
      return [provider?.backend?.type ?? PASSTHROUGHMODEL_DEFAULTS.backendType, provider?.hostname, provider?.port, provider?.backend];
    },
  });
}

/**
 * Defaults that follow from the backend type: the credential type (WorkloadIdentity for Bedrock,
 * APIKey otherwise) and Anthropic's well-known host. Runs before schema validation, so it only
 * fills fields whose parents are well-formed.
 */
export function defaultPassthroughModel(model: PassthroughModelV1beta1): void {
  const provider: unknown = model.spec.provider;
  if (!isRecord(provider)) return;
  const backend: unknown = provider.backend;
  if (backend !== undefined && (!isRecord(backend) || typeof backend.type !== 'string')) return;
  // The type is written out, as v1alpha1 always stored it (its readers see no change).
  if (provider.credential === undefined) {
    provider.credential = { type: passthroughCredentialTypeV1beta1(model.spec) };
  } else if (isRecord(provider.credential) && provider.credential.type === undefined) {
    provider.credential.type = passthroughCredentialTypeV1beta1(model.spec);
  }
  if (provider.hostname === undefined && (model.spec.provider?.backend?.type ?? PASSTHROUGHMODEL_DEFAULTS.backendType) === 'Anthropic') {
    provider.hostname = PASSTHROUGHMODEL_DEFAULTS.anthropicHostname;
  }
}

export const passthroughModelAdmission: KindAdmission<PassthroughModelV1beta1> = {
  kind: PASSTHROUGHMODEL_KIND,
  resource: 'passthroughmodel',
  validate: validatePassthroughModel,
  applyDefaults: async (object) => defaultPassthroughModel(object),
};
