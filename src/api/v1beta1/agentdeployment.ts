// AgentDeployment v1beta1: the container fields grouped under `spec.container`, the workload
// overrides at `spec.overrides` (v1alpha1 `spec.provider` never named a provider), and OTLP
// defaulting to http/protobuf (docs/api-versions.md, A1–A3).
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { API_VERSION_V1BETA1, apiVersionSchema, cel, EnvVarSchema, KindSchema, ObjectMetaSchema, ResourceRequirementsSchema, StringEnum } from '../common';
import type { KubeList } from '../common';
import {
  AGENTDEPLOYMENT_KIND,
  AgentDeploymentSchema,
  AgentDeploymentSpecSchema,
  AgentDeploymentStatusSchema,
  AGENTDEPLOYMENT_LIMITS,
  httpURLRules,
  OTLP_PROTOCOLS,
} from '../agentdeployment';

/** The OTLP protocol an omitted `protocol` means in v1beta1 (the OpenTelemetry SDK default); v1alpha1 meant grpc. */
export const AGENTDEPLOYMENT_V1BETA1_DEFAULTS = { otlpProtocol: 'http/protobuf' as const };

const alpha = AgentDeploymentSpecSchema.properties;

export const AgentContainerSchema = Type.Object(
  {
    image: Type.Optional(Type.String({ description: 'image is the agent container image (instead of a framework).', minLength: 1, maxLength: 1024 })),
    command: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { description: 'command overrides the image entrypoint.', maxItems: 32 })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { description: 'args are the arguments of the container.', maxItems: 64 })),
    env: Type.Optional(Type.Array(EnvVarSchema, { description: 'env are extra environment variables of the agent container.', maxItems: 64 })),
    resources: Type.Optional(ResourceRequirementsSchema),
  },
  { description: 'container is the agent container: its image (unless a framework renders it), command, arguments, environment and resources.' },
);

export const AgentObservabilityV1beta1Schema = Type.Object(
  {
    otlp: Type.Optional(
      Type.Object(
        {
          endpoint: Type.String({
            description: 'endpoint is the OTLP collector URL, for example http://otel-collector.observability:4318.',
            minLength: 1,
            maxLength: AGENTDEPLOYMENT_LIMITS.maxURLLength,
            ...httpURLRules('spec.observability.otlp.endpoint'),
          }),
          protocol: Type.Optional(
            StringEnum(OTLP_PROTOCOLS, {
              description: 'protocol of the collector: http/protobuf (the OpenTelemetry default) or grpc.',
              default: AGENTDEPLOYMENT_V1BETA1_DEFAULTS.otlpProtocol,
            }),
          ),
        },
        { description: 'otlp exports traces and metrics of the agent to an OpenTelemetry collector.' },
      ),
    ),
  },
  { description: 'observability configures telemetry export.' },
);

export const AgentDeploymentSpecV1beta1Schema = Type.Object(
  {
    framework: alpha.framework,
    container: Type.Optional(AgentContainerSchema),
    overrides: Type.Optional(alpha.provider.properties.overrides),
    port: alpha.port,
    lifecycle: alpha.lifecycle,
    replicas: alpha.replicas,
    model: alpha.model,
    config: alpha.config,
    observability: Type.Optional(AgentObservabilityV1beta1Schema),
  },
  {
    description: 'spec is the desired state of the AgentDeployment.',
    ...cel(
      {
        rule: 'has(self.framework) != (has(self.container) && has(self.container.image))',
        message: 'spec: set exactly one of spec.container.image (a container image) or spec.framework.name (a registered agent framework)',
      },
      {
        rule: "!has(self.replicas) || self.replicas <= 1 || !has(self.lifecycle) || self.lifecycle != 'job'",
        message: 'spec.replicas: a job agent runs one pod; remove spec.replicas or set spec.lifecycle: deployment',
      },
      {
        rule: 'has(self.framework) == has(oldSelf.framework) && (!has(self.framework) || self.framework.name == oldSelf.framework.name)',
        message: 'spec.framework is immutable; create a new AgentDeployment to run another framework or to switch between image and framework',
        fieldPath: '.framework',
      },
    ),
  },
);
export type AgentDeploymentSpecV1beta1 = Static<typeof AgentDeploymentSpecV1beta1Schema>;

export const AgentDeploymentV1beta1Schema = Type.Object(
  {
    apiVersion: apiVersionSchema(API_VERSION_V1BETA1),
    kind: KindSchema(AGENTDEPLOYMENT_KIND),
    metadata: ObjectMetaSchema,
    spec: AgentDeploymentSpecV1beta1Schema,
    status: Type.Optional(AgentDeploymentStatusSchema),
  },
  { description: AgentDeploymentSchema.description, 'x-kubernetes-validations': AgentDeploymentSchema['x-kubernetes-validations'] as unknown },
);
export type AgentDeploymentV1beta1 = Static<typeof AgentDeploymentV1beta1Schema>;
export type AgentDeploymentV1beta1List = KubeList<AgentDeploymentV1beta1>;
