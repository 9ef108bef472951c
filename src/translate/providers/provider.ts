// The interface every LLMModel provider implements, so KAITO, Dynamo, KubeRay and llm-d can each
// be added as one file beside vllm.ts: a pure translation of the model into the objects that run
// it, the serving pods the gateway's InferencePool selects, and how to read the phase back.
import type { LLMModelPhase, LLMProviderName } from '../../api/llmmodel';
import type { TranslationError } from '../gateway/errors';
import type { ServingPoolSettings } from '../gateway/context';
import type { LLMModelV1beta1 } from '../../api/v1beta1';

/** A Kubernetes object as the operator applies it. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
    readonly ownerReferences?: ReadonlyArray<{ apiVersion: string; kind: string; name: string; uid: string; controller: boolean; blockOwnerDeletion: boolean }>;
  };
  readonly [field: string]: unknown;
}

/** Cluster-wide provider settings (chart values). */
export interface ProviderContext {
  /** vLLM OpenAI server image. @default `vllm/vllm-openai:v0.11.0` */
  readonly vllmImage?: string;
  /** Image with `huggingface-cli` used to download model files. @default `python:3.12-slim` with pip-installed hub */
  readonly downloaderImage?: string;
  /** Endpoint picker (EPP) image for the InferencePool. @default `registry.k8s.io/gateway-api-inference-extension/epp:v1.0.2` */
  readonly eppImage?: string;
  /** Storage class of model PVCs; undefined = cluster default. */
  readonly storageClassName?: string;
  /** PVC size when spec.model.storage.size is not set. @default `100Gi` */
  readonly defaultStorageSize?: string;
}

/** The workload whose state the phase is read from. */
export interface WorkloadRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
}

export interface ProviderTranslation {
  /** Desired objects in apply order. Empty when there are errors. */
  readonly objects: Manifest[];
  /** The workload reported in status.provider and read for the phase. */
  readonly workload: WorkloadRef;
  /** The serving pods and port the InferencePool targets. */
  readonly servingPool: ServingPoolSettings;
  /**
   * The PodMonitor of the serving pods, for the providers whose pods the operator builds (vllm,
   * llmd): `object` while `spec.serving.monitoring.enabled`, otherwise only its name (one left from
   * before is removed). Kept apart from `objects`: its CRD is the Prometheus Operator's, which a
   * cluster may lack, and serving must not wait for it.
   */
  readonly podMonitor?: { readonly name: string; readonly object?: Manifest };
  readonly errors: TranslationError[];
}

/** What the operator observed about the workload and its pods (no I/O in providers). */
export interface ObservedWorkload {
  /** The workload object, undefined if it does not exist yet. */
  readonly workload?: Record<string, unknown>;
  readonly pods: ReadonlyArray<{
    readonly phase?: string;
    readonly ready: boolean;
    /** An init container (the model download) is still running. */
    readonly initializing: boolean;
    /** Reason of a container stuck waiting (ImagePullBackOff, CrashLoopBackOff, ...). */
    readonly waitingReason?: string;
  }>;
}

export interface ProviderPhase {
  readonly phase: LLMModelPhase;
  readonly ready: number;
  readonly desired: number;
  readonly message: string;
}

/**
 * A custom resource kind of a provider's own operator. Which of its versions the API server serves
 * is detected at run time (discovery): the operator writes the first of `versions` that is served.
 */
export interface ProviderResource {
  readonly group: string;
  readonly kind: string;
  /** Versions this build can write, most preferred (newest) first. */
  readonly versions: readonly string[];
  /** What to install when the API server serves none of them (ProviderCRDUnavailable message). */
  readonly installHint: string;
}

/** For each provider resource kind, the `group/version` detection chose. */
export type ServedVersions = Readonly<Record<string, string>>;

export interface LLMProvider {
  readonly name: LLMProviderName;
  /** The provider's custom resources, detected at run time; none for the direct vLLM provider. */
  readonly resources?: readonly ProviderResource[];
  /**
   * Whether the mutating webhook writes an omitted `spec.serving.tensorParallelism` as
   * `spec.resources.gpu.count`. False for a provider that sets the tensor-parallel size itself and
   * refuses the field (KAITO): a default it refuses would make every stored model unservable.
   */
  readonly defaultsTensorParallelism: boolean;
  /**
   * Pure translation. `served` holds, for each kind in `resources`, the `group/version` to write
   * (always set for every listed kind when the operator calls it).
   */
  translate(model: LLMModelV1beta1, context: ProviderContext, served?: ServedVersions): ProviderTranslation;
  phase(model: LLMModelV1beta1, observed: ObservedWorkload): ProviderPhase;
}

/** Waiting reasons that will not resolve without a change (image, config). */
export const FATAL_WAITING_REASONS = ['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'CreateContainerConfigError', 'CrashLoopBackOff'];

/** A phase from pod states, shared by providers that run plain pods. */
export function phaseFromPods(desired: number, observed: ObservedWorkload): ProviderPhase {
  const ready = observed.pods.filter((p) => p.ready).length;
  if (desired === 0) return { phase: 'Ready', ready, desired, message: 'scaled to zero replicas' };
  if (ready >= desired) return { phase: 'Ready', ready, desired, message: `${ready}/${desired} serving replicas ready` };
  const fatal = observed.pods.find((p) => p.waitingReason && FATAL_WAITING_REASONS.includes(p.waitingReason));
  if (fatal) return { phase: ready > 0 ? 'Degraded' : 'Error', ready, desired, message: `a serving pod is stuck: ${fatal.waitingReason}` };
  if (observed.pods.some((p) => p.initializing)) return { phase: 'Downloading', ready, desired, message: `downloading model files (${ready}/${desired} ready)` };
  if (!observed.workload) return { phase: 'Pending', ready, desired, message: 'waiting for the workload to be created' };
  return { phase: ready > 0 ? 'Degraded' : 'Starting', ready, desired, message: `${ready}/${desired} serving replicas ready` };
}
