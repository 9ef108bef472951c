// Admission rules for LLMModel that the CRD schema and its CEL rules cannot express: placement
// in the operator's managed namespace, no name shared with a PassthroughModel, the effective
// endpoint subdomain, warnings for settings that work but surprise, and defaults that depend on
// other fields. And what the model carries into its pods: every Secret and ConfigMap it names is
// reviewed as the requesting user, provider overrides stay inside their allow-list, and images
// inside the installation's allow-list (docs/security.md).
import { resourceListProblems } from '../api/common';
import { LLMMODEL_DEFAULTS, LLMMODEL_KIND, LLMMODEL_NAME_PATTERN, llmModelProviderName } from '../api/llmmodel';
import { llmProvider, providers } from '../translate/providers';
import { PASSTHROUGHMODEL_KIND } from '../api/passthroughmodel';
import type { AdmissionContext, KindAdmission } from './admission';
import { httpURLProblem } from './http-url';
import { imageProblem } from './image-policy';
import { jsonEqual } from './json-patch';
import { validateModel } from './model-placement';
import { llmModelRoutingFindings } from './routing';
import { envReview } from './pod-references';
import { reviewProviderOverrides } from './provider-overrides';
import { type AdmissionRequest, isRecord } from './review';
import type { SecretReference } from './secret-access';
import { Findings, type Verdict } from './verdict';
import type { LLMModelV1beta1 } from '../api/v1beta1';

const maxLabelLength = 63;
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The DNS label the model's external endpoint uses: `spec.endpoints.external.subdomain`, else
 * the object name with dots turned into dashes (a name may be a DNS subdomain, a label may not).
 */
export function effectiveSubdomain(model: Pick<LLMModelV1beta1, 'metadata' | 'spec'>): { value: string; field: string } {
  // The generated type of `external` lacks `subdomain` (it is added through a schema helper).
  const external = model.spec?.endpoints?.external as { subdomain?: string } | undefined;
  const explicit = external?.subdomain;
  if (explicit !== undefined) return { value: explicit, field: 'spec.endpoints.external.subdomain' };
  return { value: (model.metadata?.name ?? '').replace(/\./g, '-'), field: 'metadata.name' };
}

// Compiled once, not on every admission request.
const llmModelName = new RegExp(LLMMODEL_NAME_PATTERN);

/**
 * The CRD's rule on metadata.name, with the same message: the name becomes part of Service names
 * (DNS-1035 labels), so a dot or a leading digit would give a model the operator can never serve.
 */
export function llmModelNameProblem(name: string): string | undefined {
  if (llmModelName.test(name)) return undefined;
  const suggestion = `${/^[0-9]/.test(name) ? 'm-' : ''}${name.replace(/\./g, '-')}`;
  return (
    `metadata.name: "${name}" becomes part of the model's Service names (<name>-vllm, <name>-epp), which must be DNS-1035 labels: ` +
    `lower-case letters, digits and '-', starting with a letter (no '.'); rename the object, for example to "${suggestion}"`
  );
}

/** Field-level checks and warnings of one LLMModel object (no cluster state). */
export function llmModelFieldFindings(model: LLMModelV1beta1, findings: Findings): void {
  const { spec } = model;
  const subdomain = effectiveSubdomain(model);
  if (subdomain.value.length > maxLabelLength) {
    findings.deny(
      `${subdomain.field}: the endpoint subdomain "${subdomain.value}" is ${subdomain.value.length} characters, more than the ${maxLabelLength} a DNS label allows; ` +
        'set spec.endpoints.external.subdomain to a shorter label',
    );
  } else if (subdomain.value && !dnsLabel.test(subdomain.value)) {
    findings.deny(
      `${subdomain.field}: the endpoint subdomain "${subdomain.value}" is not a DNS label; ` +
        "set spec.endpoints.external.subdomain to lower-case letters, digits and '-', starting and ending with a letter or digit",
    );
  }

  llmModelRoutingFindings(spec.routing, findings);
  const tracingEndpoint = spec.observability?.tracing?.endpoint;
  if (tracingEndpoint !== undefined) {
    const problem = httpURLProblem(tracingEndpoint, 'spec.observability.tracing.endpoint');
    if (problem) findings.deny(problem);
  }

  const storageType = spec.model.storage?.type ?? 'pvc';
  if (storageType === 'emptyDir' && spec.model.preload === true) {
    findings.warn(
      'spec.model.storage.type: emptyDir with spec.model.preload downloads the whole model again on every pod start; use type pvc to keep it',
    );
  }
  if (storageType === 'emptyDir' && spec.model.storage?.storageClassName) {
    findings.warn('spec.model.storage.storageClassName is ignored for emptyDir storage; remove it or use type pvc');
  }
  if (spec.model.source === 'huggingface' && spec.model.image) {
    findings.warn('spec.model.image is ignored when spec.model.source is huggingface; remove it or use source oci');
  }
  if (spec.model.source === 'oci' && (spec.model.revision || spec.model.authSecretName)) {
    findings.warn('spec.model.revision and spec.model.authSecretName apply to Hugging Face downloads only and are ignored for source oci');
  }
  if (spec.access.public === true && (spec.access.groups?.length ?? 0) > 0) {
    findings.warn('spec.access.groups is ignored because spec.access.public is true; remove the groups or set public: false');
  }

  const gpus = spec.resources.gpu.count;
  const tensor = spec.serving?.tensorParallelism ?? Math.max(gpus, 1);
  const data = spec.serving?.dataParallelism ?? 1;
  if (gpus > 0 && tensor * data > gpus) {
    findings.warn(
      `spec.serving: tensorParallelism × dataParallelism is ${tensor * data} but spec.resources.gpu.count is ${gpus}; ` +
        'the engine will not start until they match',
    );
  }
  if (gpus > 0 && spec.serving?.updateStrategy === 'RollingUpdate') {
    findings.warn(
      'spec.serving.updateStrategy: RollingUpdate starts the new pod before the old one stops, so it needs spare GPUs (and a ReadWriteMany volume); use Recreate otherwise',
    );
  }
}

/** What the model carries into its pods: the Secrets and ConfigMaps it names, and what may not be allowed. */
export function llmModelPodReview(model: LLMModelV1beta1): { references: SecretReference[]; problems: string[]; images: Array<{ field: string; image: string }> } {
  const spec = model.spec;
  const env = envReview(spec?.serving?.env, 'spec.serving.env');
  const provider = spec?.provider?.name ?? LLMMODEL_DEFAULTS.providerName;
  const overrides = reviewProviderOverrides(provider, spec?.provider?.overrides, spec?.serving?.image);
  const servingImage = spec?.serving?.image;
  return {
    references: [
      // The model server gets the token as HF_TOKEN (KAITO: the preset's modelAccessSecret; Dynamo: envFromSecret).
      ...(spec?.model?.authSecretName ? [{ name: spec.model.authSecretName, field: 'spec.model.authSecretName' }] : []),
      ...env.references,
      ...overrides.references,
    ],
    problems: [...env.problems, ...overrides.problems],
    images: [...(servingImage ? [{ field: 'spec.serving.image', image: servingImage }] : []), ...overrides.images],
  };
}

export function validateLLMModel(request: AdmissionRequest<LLMModelV1beta1>, context: AdmissionContext): Promise<Verdict> {
  // What reaches the pods is checked on CREATE and whenever the spec changes (never on the
  // operator's own finalizer writes): a stored object is not refused for a rule it predates until
  // someone edits its spec.
  const old = request.oldObject as LLMModelV1beta1 | undefined;
  const specChanged = (model: LLMModelV1beta1) => !old || !jsonEqual(old.spec, model.spec);
  // The name is checked on CREATE only (as the CRD rule): it cannot change, and an object admitted
  // before the rule must still take the operator's finalizer removal.
  const fieldFindings = (model: LLMModelV1beta1, findings: Findings) => {
    const nameProblem = request.operation === 'CREATE' ? llmModelNameProblem(model.metadata?.name ?? request.name ?? '') : undefined;
    if (nameProblem) findings.deny(nameProblem);
    for (const problem of resourceListProblems(model.spec.resources, 'spec.resources', old?.spec?.resources)) findings.deny(problem);
    llmModelFieldFindings(model, findings);
    if (!specChanged(model)) return;
    const pods = llmModelPodReview(model);
    for (const problem of pods.problems) findings.deny(problem);
    for (const { field, image } of pods.images) {
      const problem = imageProblem(image, field, context.allowedImages ?? []);
      if (problem) findings.deny(problem);
    }
  };
  return validateModel(request, context, { kind: LLMMODEL_KIND, otherKind: PASSTHROUGHMODEL_KIND }, fieldFindings, {
    secrets: (model) => llmModelPodReview(model).references,
    // The Secrets reach whatever the spec runs (its image, command, overrides): any spec change
    // is reviewed again, as whoever changes it could point the Secrets at another program.
    destination: (model) => model.spec,
  });
}

/**
 * Defaults that follow from other fields: tensor parallelism spans the requested GPUs, for the
 * providers that take it from the model (not KAITO, which sets it from the node and refuses it).
 */
// Runs before schema validation, so every field read is type-checked first.
export function defaultLLMModel(model: LLMModelV1beta1): void {
  const gpus = model.spec.resources?.gpu?.count;
  const serving: unknown = model.spec.serving;
  if (!Number.isInteger(gpus) || gpus < 1) return;
  const providerName: unknown = isRecord(model.spec.provider) ? model.spec.provider.name : undefined;
  if (providerName !== undefined && !(typeof providerName === 'string' && Object.hasOwn(providers, providerName))) return;
  if (!llmProvider(llmModelProviderName(model.spec)).defaultsTensorParallelism) return;
  if (serving === undefined) model.spec.serving = { tensorParallelism: gpus };
  else if (isRecord(serving) && serving.tensorParallelism === undefined) serving.tensorParallelism = gpus;
}

export const llmModelAdmission: KindAdmission<LLMModelV1beta1> = {
  kind: LLMMODEL_KIND,
  resource: 'llmmodel',
  validate: validateLLMModel,
  applyDefaults: async (object) => defaultLLMModel(object),
};
