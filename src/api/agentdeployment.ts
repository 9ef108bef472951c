// AgentDeployment: an agent workload (a container image or a named agent framework) bound to
// exactly one model, either a model served by this gateway (modelRef; the operator mints its API
// key) or an external API reached directly (externalAPI, as in AI Runway's AgentDeployment).
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import {
  ApiVersionSchema,
  cel,
  modelIdRules,
  ConditionsSchema,
  DNS_LABEL_PATTERN,
  EnvVarSchema,
  FreeFormObject,
  KindSchema,
  ObjectMetaSchema,
  ObjectNameSchema,
  ObservedGenerationSchema,
  ResourceRequirementsSchema,
  StringEnum,
  valueRule,
} from './common';
import type { KubeList } from './common';
import { AGE_COLUMN, PHASE_COLUMN, READY_COLUMN } from './crd';
import type { KindDefinition } from './crd';

// Group and version live in common.ts; re-exported so each kind file holds all its constants.
export { API_GROUP, API_VERSION, API_GROUP_VERSION } from './common';

export const AGENTDEPLOYMENT_KIND = 'AgentDeployment';
export const AGENTDEPLOYMENT_PLURAL = 'agentdeployments';
export const AGENTDEPLOYMENT_SINGULAR = 'agentdeployment';
export const AGENTDEPLOYMENT_LIST_KIND = 'AgentDeploymentList';
export const AGENTDEPLOYMENT_SHORT_NAMES = ['agd'];

/** Kinds a modelRef may point at. */
export const MODEL_REF_KINDS = ['LLMModel', 'PassthroughModel'] as const;
export type ModelRefKind = (typeof MODEL_REF_KINDS)[number];

/** API dialects of an external model endpoint (as AI Runway). */
export const EXTERNAL_API_TYPES = ['openai', 'anthropic', 'azureOpenAI', 'custom'] as const;
export type ExternalAPIType = (typeof EXTERNAL_API_TYPES)[number];

export const AGENT_LIFECYCLES = ['deployment', 'job'] as const;
export type AgentLifecycle = (typeof AGENT_LIFECYCLES)[number];

export const OTLP_PROTOCOLS = ['grpc', 'http/protobuf'] as const;
export const MODEL_BINDING_MODES = ['modelRef', 'externalAPI'] as const;
export const AGENTDEPLOYMENT_PHASES = ['Pending', 'Deploying', 'Running', 'Completed', 'Failed', 'Terminating'] as const;
export type AgentDeploymentPhase = (typeof AGENTDEPLOYMENT_PHASES)[number];

export const AGENTDEPLOYMENT_DEFAULTS = {
  lifecycle: 'deployment' as AgentLifecycle,
  replicas: 1,
  port: 8080,
  credentialsKey: 'apiKey',
  otlpProtocol: 'grpc' as const,
};

export const AGENTDEPLOYMENT_LIMITS = { maxReplicas: 16, maxNameLength: 63, maxURLLength: 2048 };

/** An absolute http(s) URL with a host and without credentials in it. */
export function httpURLRules(field: string) {
  return cel(
    valueRule(
      "isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",
      field,
      'is not an absolute http(s) URL; write it as https://host[:port][/path]',
    ),
    {
      rule: "!self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://[^/]*@')",
      message: `${field} must not contain a user name or password; put the credential in a Secret and reference it instead`,
    },
  );
}

export const ModelRefSchema = Type.Object(
  {
    kind: StringEnum(MODEL_REF_KINDS, { description: 'kind of the model: LLMModel or PassthroughModel.' }),
    name: ObjectNameSchema('name of the model object in the same namespace.'),
    modelName: Type.Optional(
      Type.String({
        description:
          'modelName is the model id the agent requests. Defaults to spec.model.name of an LLMModel; required for a PassthroughModel (one of its declared ids).',
        minLength: 1,
        maxLength: 256,
        ...cel(...modelIdRules('spec.model.modelRef.modelName')),
      }),
    ),
  },
  {
    description: 'modelRef binds the agent to a model served through this gateway; the operator mints an API key for the agent.',
    ...cel({
      rule: "self.kind != 'PassthroughModel' || has(self.modelName)",
      message: 'spec.model.modelRef.modelName is required for a PassthroughModel; set it to one of the model ids the provider serves',
    }),
  },
);

export const ExternalAPISchema = Type.Object(
  {
    type: StringEnum(EXTERNAL_API_TYPES, { description: 'type is the API dialect: openai, anthropic, azureOpenAI or custom.' }),
    baseURL: Type.String({
      description: 'baseURL is the absolute http(s) URL of the API, for example https://api.openai.com/v1.',
      minLength: 1,
      maxLength: AGENTDEPLOYMENT_LIMITS.maxURLLength,
      ...httpURLRules('spec.model.externalAPI.baseURL'),
    }),
    modelName: Type.String({
      description: 'modelName is the model id the agent requests.',
      minLength: 1,
      maxLength: 256,
      ...cel(...modelIdRules('spec.model.externalAPI.modelName')),
    }),
    credentialsRef: Type.Optional(
      Type.Object(
        {
          name: ObjectNameSchema('name of a Secret in the same namespace.'),
          key: Type.Optional(
            Type.String({
              description: 'key in the Secret that holds the API key.',
              default: AGENTDEPLOYMENT_DEFAULTS.credentialsKey,
              minLength: 1,
              maxLength: 253,
            }),
          ),
        },
        { description: 'credentialsRef names the Secret key holding the API key; the requesting user must be allowed to read it.' },
      ),
    ),
  },
  { description: 'externalAPI binds the agent directly to an external model API.' },
);

export const AgentModelBindingSchema = Type.Object(
  {
    modelRef: Type.Optional(ModelRefSchema),
    externalAPI: Type.Optional(ExternalAPISchema),
  },
  {
    description: 'model binds the agent to exactly one model: modelRef or externalAPI.',
    ...cel({
      rule: 'has(self.modelRef) != has(self.externalAPI)',
      message:
        'spec.model: set exactly one of spec.model.modelRef (a model served by this gateway) or spec.model.externalAPI (an external API called directly)',
    }),
  },
);

export const AgentDeploymentSpecSchema = Type.Object(
  {
    framework: Type.Optional(
      Type.Object(
        {
          name: Type.String({
            description: 'name of a registered agent framework (a DNS label). Immutable.',
            minLength: 1,
            maxLength: 63,
            pattern: DNS_LABEL_PATTERN,
          }),
        },
        { description: 'framework runs a named agent framework instead of a container image.' },
      ),
    ),
    provider: Type.Optional(
      Type.Object(
        {
          overrides: Type.Optional(
            Type.Unsafe<Record<string, Record<string, unknown>>>({
              description:
                'overrides adjusts the rendered workload: only the workload and container sections, each limited to podSecurityContext / securityContext settings the admission webhook allows.',
              type: 'object',
              maxProperties: 2,
              // A map of sections so CEL can list the keys; each section is kept verbatim for the webhook's allow-list.
              additionalProperties: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              ...cel({
                rule: "self.all(section, section in ['workload', 'container'])",
                message: 'spec.provider.overrides may only contain the workload and container sections; remove any other key',
              }),
            }),
          ),
        },
        { description: 'provider holds settings for the component that renders the agent workload.' },
      ),
    ),
    image: Type.Optional(Type.String({ description: 'image is the agent container image (instead of a framework).', minLength: 1, maxLength: 1024 })),
    command: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { description: 'command overrides the image entrypoint.', maxItems: 32 })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { description: 'args are the arguments of the container.', maxItems: 64 })),
    env: Type.Optional(Type.Array(EnvVarSchema, { description: 'env are extra environment variables of the agent container.', maxItems: 64 })),
    port: Type.Optional(
      Type.Integer({
        description: 'port the agent listens on; the Service exposes it (deployment lifecycle only).',
        format: 'int32',
        minimum: 1,
        maximum: 65535,
        default: AGENTDEPLOYMENT_DEFAULTS.port,
      }),
    ),
    lifecycle: Type.Optional(
      StringEnum(AGENT_LIFECYCLES, {
        description: 'lifecycle runs the agent as a long-lived Deployment (deployment) or as a run-to-completion Job (job).',
        default: AGENTDEPLOYMENT_DEFAULTS.lifecycle,
      }),
    ),
    replicas: Type.Optional(
      Type.Integer({
        description: `replicas of a deployment agent (0 to ${AGENTDEPLOYMENT_LIMITS.maxReplicas}); a job runs one pod.`,
        format: 'int32',
        minimum: 0,
        maximum: AGENTDEPLOYMENT_LIMITS.maxReplicas,
      }),
    ),
    model: AgentModelBindingSchema,
    config: Type.Optional(
      FreeFormObject({
        description: 'config is framework-specific configuration, passed to the agent unchanged.',
        maxProperties: 64,
      }),
    ),
    resources: Type.Optional(ResourceRequirementsSchema),
    observability: Type.Optional(
      Type.Object(
        {
          otlp: Type.Optional(
            Type.Object(
              {
                endpoint: Type.String({
                  description: 'endpoint is the OTLP collector URL, for example http://otel-collector.observability:4317.',
                  minLength: 1,
                  maxLength: AGENTDEPLOYMENT_LIMITS.maxURLLength,
                  ...httpURLRules('spec.observability.otlp.endpoint'),
                }),
                protocol: Type.Optional(
                  StringEnum(OTLP_PROTOCOLS, { description: 'protocol of the collector: grpc or http/protobuf.', default: AGENTDEPLOYMENT_DEFAULTS.otlpProtocol }),
                ),
              },
              { description: 'otlp exports traces and metrics of the agent to an OpenTelemetry collector.' },
            ),
          ),
        },
        { description: 'observability configures telemetry export.' },
      ),
    ),
  },
  {
    description: 'spec is the desired state of the AgentDeployment.',
    ...cel(
      {
        rule: 'has(self.framework) != has(self.image)',
        message: 'spec: set exactly one of spec.image (a container image) or spec.framework.name (a registered agent framework)',
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
export type AgentDeploymentSpec = Static<typeof AgentDeploymentSpecSchema>;

export const AgentDeploymentStatusSchema = Type.Object(
  {
    phase: Type.Optional(
      StringEnum(AGENTDEPLOYMENT_PHASES, { description: 'phase summarises the lifecycle: Pending, Deploying, Running, Completed, Failed or Terminating.' }),
    ),
    framework: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ description: 'name of the framework in use.' })),
          providerVersion: Type.Optional(Type.String({ description: 'providerVersion is the version of the framework provider.' })),
        },
        { description: 'framework records the resolved agent framework.' },
      ),
    ),
    modelBinding: Type.Optional(
      Type.Object(
        {
          bindingMode: Type.Optional(StringEnum(MODEL_BINDING_MODES, { description: 'bindingMode is modelRef or externalAPI.' })),
          apiType: Type.Optional(Type.String({ description: 'apiType is the API dialect the agent speaks.' })),
          baseURL: Type.Optional(Type.String({ description: 'baseURL is the resolved base URL the agent calls.' })),
          modelName: Type.Optional(Type.String({ description: 'modelName is the resolved model id.' })),
          credentialsRef: Type.Optional(
            Type.Object(
              {
                name: Type.Optional(Type.String({ description: 'name of the Secret holding the key the agent uses.' })),
                key: Type.Optional(Type.String({ description: 'key in that Secret.' })),
              },
              { description: 'credentialsRef is the Secret key the agent reads its API key from.' },
            ),
          ),
          observedResourceUID: Type.Optional(Type.String({ description: 'observedResourceUID is the UID of the bound model object.' })),
        },
        { description: 'modelBinding is the resolved model binding; providers read it instead of resolving Secrets themselves.' },
      ),
    ),
    runtime: Type.Optional(
      Type.Object(
        {
          workloadRef: Type.Optional(
            Type.Object(
              {
                apiVersion: Type.Optional(Type.String({ description: 'apiVersion of the workload.' })),
                kind: Type.Optional(Type.String({ description: 'kind of the workload (Deployment or Job).' })),
                name: Type.Optional(Type.String({ description: 'name of the workload.' })),
                namespace: Type.Optional(Type.String({ description: 'namespace of the workload.' })),
              },
              { description: 'workloadRef points at the object that runs the agent.' },
            ),
          ),
          address: Type.Optional(Type.String({ description: 'address is the in-cluster URL of the agent.' })),
        },
        { description: 'runtime describes the running workload.' },
      ),
    ),
    replicas: Type.Optional(
      Type.Object(
        {
          desired: Type.Optional(Type.Integer({ description: 'desired number of pods.', format: 'int32' })),
          ready: Type.Optional(Type.Integer({ description: 'ready pods.', format: 'int32' })),
          available: Type.Optional(Type.Integer({ description: 'available pods.', format: 'int32' })),
        },
        { description: 'replicas counts the agent pods.' },
      ),
    ),
    observedGeneration: Type.Optional(ObservedGenerationSchema),
    conditions: Type.Optional(ConditionsSchema),
  },
  { description: 'status is the observed state of the AgentDeployment, written by the operator.' },
);
export type AgentDeploymentStatus = Static<typeof AgentDeploymentStatusSchema>;

export const AgentDeploymentSchema = Type.Object(
  {
    apiVersion: ApiVersionSchema,
    kind: KindSchema(AGENTDEPLOYMENT_KIND),
    metadata: ObjectMetaSchema,
    spec: AgentDeploymentSpecSchema,
    status: Type.Optional(AgentDeploymentStatusSchema),
  },
  {
    description: 'AgentDeployment runs an agent workload bound to one model.',
    ...cel({
      rule: `size(self.metadata.name) <= ${AGENTDEPLOYMENT_LIMITS.maxNameLength} && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`,
      message:
        'metadata.name must be a DNS-1035 label (at most 63 lower-case letters, digits or \'-\', starting with a letter), because it names the agent Service; rename the object',
    }),
  },
);
export type AgentDeployment = Static<typeof AgentDeploymentSchema>;
export type AgentDeploymentList = KubeList<AgentDeployment>;

/** What the CRD builder needs to know about AgentDeployment. */
export const AGENTDEPLOYMENT_DEFINITION: KindDefinition = {
  kind: AGENTDEPLOYMENT_KIND,
  listKind: AGENTDEPLOYMENT_LIST_KIND,
  plural: AGENTDEPLOYMENT_PLURAL,
  singular: AGENTDEPLOYMENT_SINGULAR,
  shortNames: AGENTDEPLOYMENT_SHORT_NAMES,
  schema: AgentDeploymentSchema,
  printerColumns: [
    PHASE_COLUMN,
    { name: 'Model', type: 'string', jsonPath: '.status.modelBinding.modelName', description: 'Model the agent calls.' },
    { name: 'Framework', type: 'string', jsonPath: '.spec.framework.name', description: 'Agent framework, when one is used.', priority: 1 },
    READY_COLUMN,
    AGE_COLUMN,
  ],
};
