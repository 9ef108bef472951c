// The KAITO provider: the model becomes one kaito.sh Workspace, and KAITO's workspace controller
// picks (or provisions) a GPU node, runs vLLM on it and names its Service after the Workspace.
// A Workspace has no `spec`: `resource` (GPU nodes, with a required labelSelector) and `inference`
// (the preset: a curated KAITO preset name or, from KAITO v0.9.0, a Hugging Face repository id)
// sit at the top level. v1alpha1 and v1beta1 have the same layout; only v1beta1 has
// `inference.preset.presetOptions.modelAccessSecret`, and only in recent releases (v0.12.0 has it,
// v0.4.5 does not). The phase is read from the Workspace's conditions (ResourceReady,
// InferenceReady, WorkspaceSucceeded) and, while it is not ready, from the serving pods.
import { LLMMODEL_DEFAULTS } from '../../api/llmmodel';
import { translationError, TranslationError } from '../gateway/errors';
import { SERVING_POD_MODEL_LABEL } from '../gateway/llmmodel';
import { gatewayObjectNames } from '../gateway/names';
import {
  FATAL_WAITING_REASONS,
  LLMProvider,
  Manifest,
  ObservedWorkload,
  ProviderContext,
  ProviderPhase,
  ProviderResource,
  ProviderTranslation,
  ServedVersions,
} from './provider';
import { EPP_GRPC_PORT, dns1035Name, endpointPickerObjects, mergeOverrides, providerMetadata } from './serving-objects';
import type { LLMModelV1beta1 } from '../../api/v1beta1';

export const KAITO_GROUP = 'kaito.sh';
export const KAITO_WORKSPACE_KIND = 'Workspace';
/** Workspace versions this build writes, most preferred first (v1beta1 needs KAITO v0.4.5+). */
export const KAITO_WORKSPACE_VERSIONS = ['v1beta1', 'v1alpha1'] as const;
/** Label KAITO puts on the pods of a Workspace's inference workload (its Services select it too). */
export const KAITO_WORKSPACE_LABEL = 'kaito.sh/workspace';
/** Container port of KAITO's OpenAI-compatible inference server (its Service maps port 80 to it). */
export const KAITO_INFERENCE_PORT = 5000;
/** Annotation choosing KAITO's serving runtime; `vllm` is what the gateway's OpenAI routes need. */
export const KAITO_RUNTIME_ANNOTATION = 'kaito.sh/runtime';
export const KAITO_RUNTIME = 'vllm';
/**
 * Longest Workspace name this provider generates. The name becomes a Service (a DNS-1035 label,
 * at most 63), a `<name>-headless` Service, StatefulSet pods `<name>-N` and the StatefulSet's
 * `controller-revision-hash` label `<name>-<10 characters>`, which must itself fit in 63: 52.
 */
export const KAITO_WORKSPACE_NAME_MAX = 52;

export const KAITO_WORKSPACE_RESOURCE: ProviderResource = {
  group: KAITO_GROUP,
  kind: KAITO_WORKSPACE_KIND,
  versions: KAITO_WORKSPACE_VERSIONS,
  installHint:
    "install KAITO's workspace controller and its CRDs (the kaito-workspace Helm chart): v0.4.5 or later serves kaito.sh/v1beta1 Workspaces, older releases only kaito.sh/v1alpha1",
};

/**
 * The Workspace name (and so the name of KAITO's Service) for the LLMModel `modelName`: the model
 * name itself when it is a DNS-1035 label of at most 52 characters. Otherwise (a `.`, a leading
 * digit, or a longer name) dots become dashes, a leading digit gets an `m-` prefix, the name is
 * cut and `-<hash of the model name>` appended, so distinct models keep distinct Workspaces.
 */
export function kaitoWorkspaceName(modelName: string): string {
  return dns1035Name(modelName, KAITO_WORKSPACE_NAME_MAX);
}

/** The label selector of the GPU nodes: `spec.scheduling.nodeSelector`, else a per-model label. */
export function kaitoNodeLabels(model: LLMModelV1beta1): Record<string, string> {
  const nodeSelector = model.spec.scheduling?.nodeSelector;
  if (nodeSelector && Object.keys(nodeSelector).length > 0) return { ...nodeSelector };
  return { [SERVING_POD_MODEL_LABEL]: gatewayObjectNames(model.metadata.name ?? '').modelLabel };
}

/** The `group/version` to write: the detected one, else the most preferred. */
function workspaceApiVersion(served: ServedVersions | undefined): string {
  return served?.[KAITO_WORKSPACE_KIND] ?? `${KAITO_GROUP}/${KAITO_WORKSPACE_VERSIONS[0]}`;
}

function check(model: LLMModelV1beta1, apiVersion: string): TranslationError[] {
  const spec = model.spec;
  const errors: TranslationError[] = [];
  const useConfigMap =
    'put vLLM flags in a ConfigMap (key inference_config.yaml, under a `vllm:` map) and name it in spec.provider.overrides.inference.config (KAITO v0.4.5 or later)';
  if (spec.model.source === 'oci') {
    errors.push(
      translationError(
        'spec.model.source',
        'oci is not supported by the KAITO provider: KAITO loads a preset or a Hugging Face model by name, not weights from an image; use source huggingface with a KAITO preset name or Hugging Face repository id in spec.model.name, or provider vllm',
      ),
    );
  }
  if (spec.model.revision) {
    errors.push(
      translationError(
        'spec.model.revision',
        'a KAITO Workspace has no field for a Hugging Face revision (KAITO serves the revision its preset pins, or the repository default); remove spec.model.revision or use provider vllm',
      ),
    );
  }
  if (spec.model.authSecretName && !apiVersion.endsWith('/v1beta1')) {
    errors.push(
      translationError(
        'spec.model.authSecretName',
        `the API server serves KAITO Workspaces as ${apiVersion}, which has no inference.preset.presetOptions.modelAccessSecret; upgrade KAITO to a release whose v1beta1 Workspace has modelAccessSecret (v0.12.0 has it) or remove spec.model.authSecretName`,
      ),
    );
  }
  const replicas = spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas;
  if (replicas !== 1) {
    errors.push(
      translationError(
        'spec.serving.replicas',
        `${replicas} is not supported by the KAITO provider: a KAITO Workspace runs exactly one serving instance; set 1 (delete the LLMModel to stop serving) or use provider vllm for more replicas`,
      ),
    );
  }
  if (spec.resources.gpu.count === 0) {
    errors.push(translationError('spec.resources.gpu.count', 'is 0, but KAITO serves models on GPU nodes only; set at least 1 or use provider vllm to serve on CPU'));
  }
  if (spec.serving?.image) {
    errors.push(translationError('spec.serving.image', "is not supported by the KAITO provider: KAITO chooses the serving image from its preset; remove it or use provider vllm"));
  }
  if (spec.serving?.command?.length) {
    errors.push(translationError('spec.serving.command', 'is not supported by the KAITO provider: KAITO builds the serving command from its preset; remove it or use provider vllm'));
  }
  if (spec.serving?.tensorParallelism !== undefined) {
    errors.push(
      translationError('spec.serving.tensorParallelism', `is not supported by the KAITO provider: KAITO sets the tensor-parallel size to the GPUs of the node; remove it, or ${useConfigMap}`),
    );
  }
  if ((spec.serving?.dataParallelism ?? LLMMODEL_DEFAULTS.dataParallelism) !== 1) {
    errors.push(translationError('spec.serving.dataParallelism', `is not supported by the KAITO provider; remove it, or ${useConfigMap}`));
  }
  if (spec.serving?.engineArgs?.length) {
    errors.push(translationError('spec.serving.engineArgs', `are not passed by the KAITO provider; remove them and ${useConfigMap}`));
  }
  if (spec.serving?.env?.length) {
    errors.push(translationError('spec.serving.env', 'is not supported by the KAITO provider: KAITO builds the serving pod; remove it or use provider vllm'));
  }
  if (spec.observability?.tracing) {
    errors.push(translationError('spec.observability.tracing', 'is not supported by the KAITO provider: KAITO builds the serving pod and its engine arguments; remove it or use provider vllm'));
  }
  return errors;
}

export function translateKAITO(model: LLMModelV1beta1, context: ProviderContext, served?: ServedVersions): ProviderTranslation {
  const name = kaitoWorkspaceName(model.metadata.name ?? '');
  const apiVersion = workspaceApiVersion(served);
  const workload = { apiVersion, kind: KAITO_WORKSPACE_KIND, name };
  const servingPool = { selector: { [KAITO_WORKSPACE_LABEL]: name }, targetPort: KAITO_INFERENCE_PORT, endpointPickerPort: EPP_GRPC_PORT };
  const errors = check(model, apiVersion);
  if (errors.length > 0) return { objects: [], workload, servingPool, errors };

  const spec = model.spec;
  const metadata = providerMetadata(model, name, 'serving');
  const generated: Manifest = {
    apiVersion,
    kind: KAITO_WORKSPACE_KIND,
    metadata: { ...metadata, annotations: { [KAITO_RUNTIME_ANNOTATION]: KAITO_RUNTIME } },
    resource: {
      // One GPU node per Workspace: KAITO gives vLLM all GPUs of that node (its SKU or its
      // nvidia.com/gpu.count label), so the model's GPUs must fit one node.
      count: 1,
      labelSelector: { matchLabels: kaitoNodeLabels(model) },
    },
    inference: {
      preset: {
        name: spec.model.name,
        ...(spec.model.authSecretName ? { presetOptions: { modelAccessSecret: spec.model.authSecretName } } : {}),
      },
    },
  };
  const workspace = mergeOverrides(generated, spec.provider?.overrides);
  return { objects: [workspace, ...endpointPickerObjects(model, context)], workload, servingPool, errors: [] };
}

interface WorkspaceCondition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
}

/** A condition reason KAITO sets when a step failed (workspaceFailed, WorkspaceInferenceStatusFailed, nodeClaimFailedCreation, ...). */
const FAILURE_REASON = /fail/i;

function workspaceStatus(workload: Record<string, unknown>): { conditions: WorkspaceCondition[]; state?: string } {
  const status = (workload.status ?? {}) as { conditions?: unknown; state?: unknown };
  const conditions = Array.isArray(status.conditions)
    ? status.conditions.filter((c): c is WorkspaceCondition => typeof c === 'object' && c !== null && typeof (c as WorkspaceCondition).type === 'string')
    : [];
  return { conditions, state: typeof status.state === 'string' ? status.state : undefined };
}

const conditionText = (c: WorkspaceCondition) => `${c.type} is ${c.status}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${c.message}` : ''}`;

/**
 * The phase from the Workspace's conditions. One Workspace is one serving instance, so `desired`
 * is 1 and `ready` is 1 exactly when KAITO reports InferenceReady True.
 */
export function kaitoPhase(_model: LLMModelV1beta1, observed: ObservedWorkload): ProviderPhase {
  const desired = 1;
  if (!observed.workload) return { phase: 'Pending', ready: 0, desired, message: 'waiting for the KAITO Workspace to be created' };
  const { conditions, state } = workspaceStatus(observed.workload);
  const find = (type: string) => conditions.find((c) => c.type === type);
  const inference = find('InferenceReady');
  const resource = find('ResourceReady');
  const failure = conditions.find((c) => c.status === 'False' && FAILURE_REASON.test(c.reason ?? ''));

  if (find('WorkspaceDeleting')?.status === 'True') return { phase: 'Pending', ready: 0, desired, message: 'the KAITO Workspace is being deleted' };
  if (inference?.status === 'True') {
    if (failure) return { phase: 'Degraded', ready: 1, desired, message: `KAITO serves the model but reports ${conditionText(failure)}` };
    return { phase: 'Ready', ready: 1, desired, message: `KAITO reports the inference ready${inference.message ? `: ${inference.message}` : ''}` };
  }
  if (failure) return { phase: 'Error', ready: 0, desired, message: `KAITO reports ${conditionText(failure)}` };
  if (state === 'Failed') return { phase: 'Error', ready: 0, desired, message: `KAITO reports the Workspace state Failed${inference ? `; ${conditionText(inference)}` : ''}` };
  const stuck = observed.pods.find((p) => p.waitingReason && FATAL_WAITING_REASONS.includes(p.waitingReason));
  if (stuck) return { phase: 'Error', ready: 0, desired, message: `a serving pod of the KAITO Workspace is stuck: ${stuck.waitingReason}` };
  if (conditions.length === 0) {
    return { phase: 'Pending', ready: 0, desired, message: "waiting for KAITO to report on the Workspace (is KAITO's workspace controller running?)" };
  }
  if (resource?.status !== 'True') {
    return { phase: 'Pending', ready: 0, desired, message: `waiting for KAITO's GPU nodes: ${resource ? conditionText(resource) : 'ResourceReady not reported yet'}` };
  }
  if (observed.pods.some((p) => p.initializing)) return { phase: 'Downloading', ready: 0, desired, message: 'the KAITO serving pod is downloading model files' };
  return { phase: 'Starting', ready: 0, desired, message: `KAITO is starting the inference: ${inference ? conditionText(inference) : 'InferenceReady not reported yet'}` };
}

export const kaitoProvider: LLMProvider = {
  name: 'kaito',
  defaultsTensorParallelism: false,
  resources: [KAITO_WORKSPACE_RESOURCE],
  translate: translateKAITO,
  phase: kaitoPhase,
};
