// LLMModel: a model served inside the cluster, by a direct vLLM Deployment or by one of the
// model-serving operators (KAITO, Dynamo, KubeRay, llm-d). Field names, meanings and defaults of the
// upstream Nebari pack's llm.nebari.dev/v1alpha1 LLMModel are kept, so its objects stay valid here;
// `spec.provider` and `status.provider` are additions.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import {
  AccessSchema,
  ApiVersionSchema,
  cel,
  celString,
  ConditionsSchema,
  DNS_LABEL_PATTERN,
  EndpointStatusSchema,
  EndpointToggleSchema,
  EnvVarSchema,
  FreeFormObject,
  KindSchema,
  ObjectMetaSchema,
  modelIdRules,
  ObservedGenerationSchema,
  positiveQuantity,
  QUANTITY_PATTERN,
  ResourceList,
  StringEnum,
  StringMap,
  valueRule,
} from './common';
import type { CelRule, KubeList } from './common';
import { AGE_COLUMN, PHASE_COLUMN, PROGRAMMED_COLUMN } from './crd';
import type { KindDefinition } from './crd';

// Group and version live in common.ts; re-exported so each kind file holds all its constants.
export { API_GROUP, API_VERSION, API_GROUP_VERSION } from './common';

export const LLMMODEL_KIND = 'LLMModel';
export const LLMMODEL_PLURAL = 'llmmodels';
export const LLMMODEL_SINGULAR = 'llmmodel';
export const LLMMODEL_LIST_KIND = 'LLMModelList';
export const LLMMODEL_SHORT_NAMES = ['llmm'];

/** Where the model weights come from. */
export const MODEL_SOURCES = ['huggingface', 'oci'] as const;
export type ModelSource = (typeof MODEL_SOURCES)[number];

/** How the model is served: a direct vLLM Deployment or a model-serving operator's resource. */
export const LLM_PROVIDERS = ['vllm', 'kaito', 'dynamo', 'kuberay', 'llmd'] as const;
export type LLMProviderName = (typeof LLM_PROVIDERS)[number];

export const STORAGE_TYPES = ['pvc', 'emptyDir'] as const;
export const UPDATE_STRATEGIES = ['Recreate', 'RollingUpdate'] as const;
export const LLMMODEL_PHASES = ['Pending', 'Downloading', 'Starting', 'Ready', 'Degraded', 'Error'] as const;
export type LLMModelPhase = (typeof LLMMODEL_PHASES)[number];

/** Defaults the API server applies (the same values appear as `default` in the CRD). */
export const LLMMODEL_DEFAULTS = {
  providerName: 'vllm' as LLMProviderName,
  gpuType: 'nvidia',
  storageType: 'pvc' as const,
  replicas: 1,
  dataParallelism: 1,
  updateStrategy: 'Recreate' as const,
  endpointEnabled: true,
  requestTimeout: '600s',
};

/** Upper bounds; they also keep the cost of the CEL rules below the API server's limit. */
export const LLMMODEL_LIMITS = { maxGpus: 64, maxReplicas: 32, maxParallelism: 64, maxArgs: 128 };

/** Keys `spec.provider.overrides` may not set: they would change what object is created or where. */
export const BLOCKED_OVERRIDE_KEYS = ['apiVersion', 'kind', 'metadata', 'status'] as const;

/**
 * The object name becomes part of Service names (`<name>-vllm`, `<name>-epp`), and a Service name
 * is a DNS-1035 label: a dotted name or one starting with a digit would be admitted and never
 * served. Longer names are cut with a hash by the operator, so only the characters are checked.
 */
export const LLMMODEL_NAME_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
const LLMMODEL_NAME_PROBLEM =
  "becomes part of the model's Service names (<name>-vllm, <name>-epp), which must be DNS-1035 labels: lower-case letters, digits and '-', starting with a letter (no '.')";
// Checked on create only: the name is fixed, and an object admitted before this rule must still
// take the operator's finalizer removal, or it could never be deleted.
export const LLMMODEL_NAME_RULE: CelRule = {
  rule: `oldSelf.hasValue() || self.metadata.name.matches('${LLMMODEL_NAME_PATTERN}')`,
  optionalOldSelf: true,
  message: `metadata.name ${LLMMODEL_NAME_PROBLEM}; rename the object, for example with '-' in place of each '.'`,
  messageExpression:
    `'metadata.name: "' + self.metadata.name + '" ${celString(LLMMODEL_NAME_PROBLEM)}; rename the object, for example to "' + ` +
    `(self.metadata.name.matches('^[0-9]') ? 'm-' : '') + self.metadata.name.replace('.', '-') + '"'`,
};

/** Gateway API Duration, as the generated routes accept it. */
export const DURATION_PATTERN = '^([0-9]{1,5}(h|m|s|ms)){1,4}$';

export const LLMModelSourceSchema = Type.Object(
  {
    name: Type.String({
      description:
        'name is the model identifier, for example mistralai/Devstral-Small-2505 (a Hugging Face repository id). It is also the model name clients send. Immutable: create a new LLMModel to serve another model.',
      minLength: 1,
      maxLength: 256,
      ...cel(
        { rule: 'self == oldSelf', message: 'spec.model.name is immutable; create a new LLMModel to serve a different model' },
        ...modelIdRules('spec.model.name'),
      ),
    }),
    source: StringEnum(MODEL_SOURCES, {
      description: 'source is where the weights are loaded from: huggingface (downloaded) or oci (copied from an OCI image). Immutable.',
      ...cel({ rule: 'self == oldSelf', message: 'spec.model.source is immutable; create a new LLMModel to load the model from another source' }),
    }),
    revision: Type.Optional(
      Type.String({ description: 'revision pins a Hugging Face commit hash, branch or tag for reproducible deployments.', maxLength: 256 }),
    ),
    authSecretName: Type.Optional(
      Type.String({ description: 'authSecretName names a Secret in the same namespace with key HF_TOKEN, for gated Hugging Face models.', maxLength: 253 }),
    ),
    image: Type.Optional(
      Type.String({ description: 'image is the OCI image that contains the model files (required when source is oci).', maxLength: 1024 }),
    ),
    storage: Type.Optional(
      Type.Object(
        {
          type: Type.Optional(
            StringEnum(STORAGE_TYPES, {
              description: 'type is the volume that holds the model files: pvc (kept across restarts) or emptyDir (downloaded again on every start).',
              default: LLMMODEL_DEFAULTS.storageType,
            }),
          ),
          size: Type.Optional(
            Type.String({
              description: 'size of the volume, a quantity above zero such as 200Gi.',
              maxLength: 64,
              ...cel(
                valueRule(
                  `self.matches('${celString(QUANTITY_PATTERN)}') && ${positiveQuantity('self')}`,
                  'spec.model.storage.size',
                  'is not a size the volume can have; write a quantity above zero such as 200Gi',
                ),
              ),
            }),
          ),
          storageClassName: Type.Optional(
            Type.String({ description: 'storageClassName overrides the chart default storage class for the PVC.', maxLength: 253 }),
          ),
        },
        { description: 'storage configures where the model files are kept.' },
      ),
    ),
    preload: Type.Optional(
      Type.Boolean({ description: 'preload downloads the model in an init container before the server starts.' }),
    ),
  },
  {
    description: 'model names the LLM to serve and where its weights come from.',
    ...cel({
      rule: "self.source != 'oci' || has(self.image)",
      message: 'spec.model.image is required when spec.model.source is oci; set it to the OCI image that holds the model files',
    }),
  },
);

export const LLMModelResourcesSchema = Type.Object(
  {
    gpu: Type.Object(
      {
        count: Type.Integer({
          description: `count is the number of GPUs per serving replica (0 to ${LLMMODEL_LIMITS.maxGpus}; 0 serves on CPU).`,
          format: 'int32',
          minimum: 0,
          maximum: LLMMODEL_LIMITS.maxGpus,
        }),
        type: Type.String({
          description: 'type is the GPU vendor; nvidia requests the nvidia.com/gpu resource.',
          default: LLMMODEL_DEFAULTS.gpuType,
          maxLength: 63,
        }),
      },
      { description: 'gpu specifies the GPUs each serving replica needs.' },
    ),
    requests: Type.Optional(ResourceList('requests are CPU and memory requests of the serving container.')),
    limits: Type.Optional(ResourceList('limits are CPU and memory limits of the serving container.')),
  },
  { description: 'resources specifies the compute each serving replica needs.' },
);

export const LLMModelServingSchema = Type.Object(
  {
    image: Type.Optional(Type.String({ description: 'image overrides the serving engine (vLLM) container image.', maxLength: 1024 })),
    command: Type.Optional(
      Type.Array(Type.String({ maxLength: 1024 }), {
        description:
          'command overrides the container command (default: python3 -m vllm.entrypoints.openai.api_server). vllmArgs are appended as arguments.',
        maxItems: 32,
      }),
    ),
    replicas: Type.Optional(
      Type.Integer({
        description: `replicas is the number of serving replicas (0 to ${LLMMODEL_LIMITS.maxReplicas}).`,
        format: 'int32',
        minimum: 0,
        maximum: LLMMODEL_LIMITS.maxReplicas,
        default: LLMMODEL_DEFAULTS.replicas,
      }),
    ),
    tensorParallelism: Type.Optional(
      Type.Integer({
        description:
          'tensorParallelism is the tensor-parallel size of the engine; defaults to resources.gpu.count, except for provider kaito, which sets it to the GPUs of the node and refuses this field.',
        format: 'int32',
        minimum: 1,
        maximum: LLMMODEL_LIMITS.maxParallelism,
      }),
    ),
    dataParallelism: Type.Optional(
      Type.Integer({
        description: 'dataParallelism is the data-parallel size of the engine.',
        format: 'int32',
        minimum: 1,
        maximum: LLMMODEL_LIMITS.maxParallelism,
        default: LLMMODEL_DEFAULTS.dataParallelism,
      }),
    ),
    vllmArgs: Type.Optional(
      Type.Array(Type.String({ maxLength: 1024 }), {
        description: 'vllmArgs are extra engine arguments, for example --max-model-len=8192.',
        maxItems: LLMMODEL_LIMITS.maxArgs,
      }),
    ),
    updateStrategy: Type.Optional(
      StringEnum(UPDATE_STRATEGIES, {
        description:
          'updateStrategy is how spec changes roll out. Recreate stops the old pod first, because a surged pod cannot get the GPUs or the ReadWriteOnce volume the old one holds; RollingUpdate needs spare GPUs.',
        default: LLMMODEL_DEFAULTS.updateStrategy,
      }),
    ),
    monitoring: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(
            Type.Boolean({
              description:
                'enabled creates a PodMonitor, named after the model with the suffix -vllm, that scrapes the serving pods at /metrics on their port http (providers vllm and llmd; kaito, dynamo and kuberay do not use it). Without the Prometheus Operator CRDs the model still serves and its MonitoringReady condition says why it is not scraped.',
            }),
          ),
        },
        { description: 'monitoring configures Prometheus scraping of the engine metrics.' },
      ),
    ),
  },
  { description: 'serving configures the inference engine: image, arguments, replicas and parallelism.' },
);

export const LLMModelEndpointsSchema = Type.Object(
  {
    external: Type.Optional(
      EndpointToggleSchema('external', true, {
        subdomain: Type.Optional(
          Type.String({
            description: 'subdomain overrides the DNS label derived from the object name.',
            maxLength: 63,
            ...cel(
              valueRule(
                `self.matches('${DNS_LABEL_PATTERN}')`,
                'spec.endpoints.external.subdomain',
                "is not a DNS label; use lower-case letters, digits and '-', starting and ending with a letter or digit",
              ),
            ),
          }),
        ),
      }),
    ),
    internal: Type.Optional(EndpointToggleSchema('internal', true)),
    requestTimeout: Type.Optional(
      Type.String({
        description:
          'requestTimeout is the per-request timeout of the generated routes (a Gateway API duration such as 600s or 10m); long generations need more than the gateway default of 60s.',
        default: LLMMODEL_DEFAULTS.requestTimeout,
        pattern: DURATION_PATTERN,
        maxLength: 32,
      }),
    ),
  },
  {
    description:
      'endpoints configures the external (API key) and internal (JWT) endpoints. Both may be disabled (as upstream): the model is then reachable only in the cluster, through its Service.',
  },
);

export const TolerationSchema = Type.Object(
  {
    key: Type.Optional(Type.String({ description: 'key is the taint key the toleration applies to; empty matches every key.' })),
    operator: Type.Optional(Type.String({ description: 'operator is Exists or Equal (default Equal).' })),
    value: Type.Optional(Type.String({ description: 'value is the taint value to match.' })),
    effect: Type.Optional(Type.String({ description: 'effect is NoSchedule, PreferNoSchedule or NoExecute; empty matches all.' })),
    tolerationSeconds: Type.Optional(
      Type.Integer({ description: 'tolerationSeconds is how long a NoExecute taint is tolerated.', format: 'int64' }),
    ),
  },
  { description: 'A toleration (core/v1 Toleration).' },
);

export const LLMModelAdvancedSchema = Type.Object(
  {
    vllm: Type.Optional(
      Type.Object(
        {
          extraArgs: Type.Optional(
            Type.Array(Type.String({ maxLength: 1024 }), { description: 'extraArgs are appended to the engine arguments.', maxItems: LLMMODEL_LIMITS.maxArgs }),
          ),
          extraEnv: Type.Optional(
            Type.Array(EnvVarSchema, { description: 'extraEnv are extra environment variables of the serving container.', maxItems: 128 }),
          ),
          tolerations: Type.Optional(
            Type.Array(TolerationSchema, {
              description:
                'tolerations are added to the serving pod. A toleration for the nvidia.com/gpu taint is added when GPUs are requested, unless one with that key is given here.',
              maxItems: 32,
            }),
          ),
          nodeSelector: Type.Optional(StringMap({ description: 'nodeSelector targets specific node pools.', maxProperties: 32 })),
          affinity: Type.Optional(FreeFormObject({ description: 'affinity is the pod affinity (core/v1 Affinity), passed through unchanged.' })),
        },
        { description: 'vllm holds pod-level settings of the serving pod.' },
      ),
    ),
    inferencePool: Type.Optional(
      Type.Object(
        {
          schedulerConfig: Type.Optional(
            FreeFormObject({ description: 'schedulerConfig is the endpoint picker (EPP) scheduler plugin configuration, passed through unchanged.' }),
          ),
        },
        { description: 'inferencePool configures the InferencePool and its endpoint picker.' },
      ),
    ),
  },
  { description: 'advanced holds escape hatches for power users.' },
);

/**
 * `spec.provider.overrides`: kept verbatim, except for the keys the operator owns. Those keys are
 * declared only so CEL can see them (keys of a free-form object are invisible to CEL); the type is
 * a free-form record because everything else is passed through.
 */
export const ProviderOverridesSchema = Type.Unsafe<Record<string, unknown>>(
  Type.Object(
    {
      apiVersion: Type.Optional(Type.String({ description: 'Not allowed: the operator sets the apiVersion of the provider resource.', maxLength: 256 })),
      kind: Type.Optional(Type.String({ description: 'Not allowed: the operator sets the kind of the provider resource.', maxLength: 256 })),
      metadata: Type.Optional(FreeFormObject({ description: 'Not allowed: the operator owns name, namespace, labels and owner references.' })),
      status: Type.Optional(FreeFormObject({ description: 'Not allowed: status belongs to the provider operator.' })),
    },
    {
      description:
        'overrides is merged into the provider resource the operator creates (an escape hatch for provider settings this API does not model). It may not set apiVersion, kind, metadata or status.',
      maxProperties: 32,
      'x-kubernetes-preserve-unknown-fields': true,
      ...cel({
        rule: BLOCKED_OVERRIDE_KEYS.map((key) => `!has(self.${key})`).join(' && '),
        message:
          'spec.provider.overrides may not set apiVersion, kind, metadata or status; remove those keys (the operator owns them) and keep only provider settings',
      }),
    },
  ),
);

export const LLMModelProviderSchema = Type.Object(
  {
    name: Type.Optional(
      StringEnum(LLM_PROVIDERS, {
        description:
          'name selects who runs the model: vllm (a Deployment created by this operator), kaito (KAITO Workspace), dynamo (NVIDIA DynamoGraphDeployment), kuberay (RayService) or llmd (llm-d). Immutable.',
        default: LLMMODEL_DEFAULTS.providerName,
      }),
    ),
    overrides: Type.Optional(ProviderOverridesSchema),
  },
  { description: 'provider chooses how the model is served. Omitted means a direct vLLM Deployment.' },
);

/** The effective provider name: `spec.provider.name`, else vllm. */
export const EFFECTIVE_PROVIDER = (obj: string) => `(has(${obj}.provider) && has(${obj}.provider.name) ? ${obj}.provider.name : 'vllm')`;

export const LLMModelSpecSchema = Type.Object(
  {
    model: LLMModelSourceSchema,
    provider: Type.Optional(LLMModelProviderSchema),
    resources: LLMModelResourcesSchema,
    serving: Type.Optional(LLMModelServingSchema),
    access: AccessSchema,
    endpoints: Type.Optional(LLMModelEndpointsSchema),
    advanced: Type.Optional(LLMModelAdvancedSchema),
  },
  {
    description: 'spec is the desired state of the LLMModel.',
    ...cel({
      rule: `${EFFECTIVE_PROVIDER('self')} == ${EFFECTIVE_PROVIDER('oldSelf')}`,
      messageExpression: `'spec.provider.name is immutable (was ' + ${EFFECTIVE_PROVIDER('oldSelf')} + '); create a new LLMModel to serve the model with another provider'`,
      fieldPath: '.provider',
    }),
  },
);
export type LLMModelSpec = Static<typeof LLMModelSpecSchema>;

export const LLMModelProviderStatusSchema = Type.Object(
  {
    name: Type.Optional(StringEnum(LLM_PROVIDERS, { description: 'name of the provider serving the model.' })),
    apiVersion: Type.Optional(Type.String({ description: 'apiVersion of the object the provider runs, as detected from the versions the API server serves, for example kaito.sh/v1beta1.' })),
    resourceKind: Type.Optional(Type.String({ description: 'resourceKind is the kind of the object the provider runs, for example Deployment or Workspace.' })),
    resourceName: Type.Optional(Type.String({ description: 'resourceName is the name of that object in the model namespace.' })),
  },
  { description: 'provider records which provider serves the model and through which object.' },
);

export const LLMModelStatusSchema = Type.Object(
  {
    phase: Type.Optional(StringEnum(LLMMODEL_PHASES, { description: 'phase summarises the lifecycle: Pending, Downloading, Starting, Ready, Degraded or Error.' })),
    conditions: Type.Optional(ConditionsSchema),
    observedGeneration: Type.Optional(ObservedGenerationSchema),
    modelSize: Type.Optional(Type.String({ description: 'modelSize is the size of the downloaded model files.' })),
    replicas: Type.Optional(
      Type.Object(
        {
          ready: Type.Integer({ description: 'ready is the number of serving replicas that are ready.', format: 'int32' }),
          desired: Type.Integer({ description: 'desired is the number of serving replicas requested.', format: 'int32' }),
        },
        { description: 'replicas counts ready and desired serving replicas.' },
      ),
    ),
    endpoints: Type.Optional(EndpointStatusSchema),
    provider: Type.Optional(LLMModelProviderStatusSchema),
  },
  { description: 'status is the observed state of the LLMModel, written by the operator.' },
);
export type LLMModelStatus = Static<typeof LLMModelStatusSchema>;

export const LLMModelSchema = Type.Object(
  {
    apiVersion: ApiVersionSchema,
    kind: KindSchema(LLMMODEL_KIND),
    metadata: ObjectMetaSchema,
    spec: LLMModelSpecSchema,
    status: Type.Optional(LLMModelStatusSchema),
  },
  {
    description: 'LLMModel serves a language model inside the cluster and publishes it on the shared gateway endpoints.',
    ...cel(
      {
        rule:
          'size(self.metadata.name) <= 63 || (has(self.spec.endpoints) && has(self.spec.endpoints.external) && has(self.spec.endpoints.external.subdomain))',
        message:
          'metadata.name is longer than 63 characters and cannot become the endpoint subdomain; shorten the name or set spec.endpoints.external.subdomain',
      },
      LLMMODEL_NAME_RULE,
    ),
  },
);
export type LLMModel = Static<typeof LLMModelSchema>;
export type LLMModelList = KubeList<LLMModel>;

/** The provider that serves `spec`, applying the default. */
export function llmModelProviderName(spec: Pick<LLMModelSpec, 'provider'>): LLMProviderName {
  return spec.provider?.name ?? LLMMODEL_DEFAULTS.providerName;
}

/** What the CRD builder needs to know about LLMModel. */
export const LLMMODEL_DEFINITION: KindDefinition = {
  kind: LLMMODEL_KIND,
  listKind: LLMMODEL_LIST_KIND,
  plural: LLMMODEL_PLURAL,
  singular: LLMMODEL_SINGULAR,
  shortNames: LLMMODEL_SHORT_NAMES,
  schema: LLMModelSchema,
  printerColumns: [
    PHASE_COLUMN,
    { name: 'Model', type: 'string', jsonPath: '.spec.model.name', description: 'Model identifier.' },
    { name: 'Provider', type: 'string', jsonPath: '.status.provider.name', description: 'Provider serving the model.' },
    PROGRAMMED_COLUMN,
    { name: 'Replicas', type: 'integer', jsonPath: '.status.replicas.ready', description: 'Ready serving replicas.', priority: 1 },
    AGE_COLUMN,
  ],
};
