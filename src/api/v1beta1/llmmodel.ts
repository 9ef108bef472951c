// LLMModel v1beta1: the v1alpha1 shape with the engine arguments in one list under their own name,
// and `spec.advanced` dissolved into the places its fields belong (docs/api-versions.md, L1–L6).
// Every block that did not change is the v1alpha1 block itself, so the two versions cannot drift.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { AccessSchema, API_VERSION_V1BETA1, apiVersionSchema, cel, EnvVarSchema, FreeFormObject, KindSchema, ObjectMetaSchema, StringMap } from '../common';
import type { KubeList } from '../common';
import {
  EFFECTIVE_PROVIDER,
  LLMMODEL_KIND,
  LLMMODEL_LIMITS,
  LLMMODEL_NAME_RULE,
  LLMModelEndpointsSchema,
  LLMModelProviderSchema,
  LLMModelResourcesSchema,
  LLMModelSchema,
  LLMModelServingSchema,
  LLMModelSourceSchema,
  LLMModelStatusSchema,
  TolerationSchema,
} from '../llmmodel';
import { LLMModelRoutingSchema } from '../routing';
import { LLMModelObservabilitySchema } from '../tracing';

/** `spec.serving.engineArgs` holds what v1alpha1 split between `vllmArgs` and `advanced.vllm.extraArgs`. */
export const LLMMODEL_V1BETA1_LIMITS = { maxEngineArgs: 2 * LLMMODEL_LIMITS.maxArgs };

const { vllmArgs: _vllmArgs, ...servingKept } = LLMModelServingSchema.properties;

export const LLMModelServingV1beta1Schema = Type.Object(
  {
    ...servingKept,
    engineArgs: Type.Optional(
      Type.Array(Type.String({ maxLength: 1024 }), {
        description:
          'engineArgs are extra arguments of the inference engine, for example --max-model-len=8192 (the vLLM Deployment, Dynamo and KubeRay pass them to their engine; KAITO refuses them).',
        maxItems: LLMMODEL_V1BETA1_LIMITS.maxEngineArgs,
      }),
    ),
    env: Type.Optional(Type.Array(EnvVarSchema, { description: 'env are extra environment variables of the serving container.', maxItems: 128 })),
  },
  { description: 'serving configures the inference engine: image, arguments, environment, replicas and parallelism.' },
);

export const LLMModelSchedulingSchema = Type.Object(
  {
    tolerations: Type.Optional(
      Type.Array(TolerationSchema, {
        description:
          'tolerations are added to the serving pods. A toleration for the nvidia.com/gpu taint is added when GPUs are requested, unless one with that key is given here.',
        maxItems: 32,
      }),
    ),
    nodeSelector: Type.Optional(StringMap({ description: 'nodeSelector targets specific node pools.', maxProperties: 32 })),
    affinity: Type.Optional(FreeFormObject({ description: 'affinity is the pod affinity (core/v1 Affinity), passed through unchanged.' })),
  },
  { description: 'scheduling places the serving pods of every provider on nodes.' },
);

export const LLMModelInferencePoolSchema = Type.Object(
  {
    schedulerConfig: Type.Optional(
      FreeFormObject({ description: 'schedulerConfig is the endpoint picker (EPP) scheduler plugin configuration, passed through unchanged.' }),
    ),
  },
  { description: 'inferencePool configures the InferencePool and its endpoint picker.' },
);

export const LLMModelSpecV1beta1Schema = Type.Object(
  {
    model: LLMModelSourceSchema,
    provider: Type.Optional(LLMModelProviderSchema),
    resources: LLMModelResourcesSchema,
    serving: Type.Optional(LLMModelServingV1beta1Schema),
    scheduling: Type.Optional(LLMModelSchedulingSchema),
    inferencePool: Type.Optional(LLMModelInferencePoolSchema),
    access: AccessSchema,
    endpoints: Type.Optional(LLMModelEndpointsSchema),
    routing: Type.Optional(LLMModelRoutingSchema),
    observability: Type.Optional(LLMModelObservabilitySchema),
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
export type LLMModelSpecV1beta1 = Static<typeof LLMModelSpecV1beta1Schema>;

export const LLMModelV1beta1Schema = Type.Object(
  {
    apiVersion: apiVersionSchema(API_VERSION_V1BETA1),
    kind: KindSchema(LLMMODEL_KIND),
    metadata: ObjectMetaSchema,
    spec: LLMModelSpecV1beta1Schema,
    status: Type.Optional(LLMModelStatusSchema),
  },
  {
    description: LLMModelSchema.description,
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
export type LLMModelV1beta1 = Static<typeof LLMModelV1beta1Schema>;
export type LLMModelV1beta1List = KubeList<LLMModelV1beta1>;
