// PassthroughModel: an external model provider (OpenAI-compatible host, AWS Bedrock, Anthropic,
// Azure OpenAI) published through the shared gateway endpoints with this project's keys and groups.
// Field names, meanings and defaults of the upstream Nebari pack's llm.nebari.dev/v1alpha1
// PassthroughModel are kept (including the legacy schemaVersion and credentialSecretName), so its
// objects stay valid here; the Anthropic and AzureOpenAI backends are additions.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import {
  AccessSchema,
  ApiVersionSchema,
  cel,
  modelIdRules,
  ConditionsSchema,
  EndpointStatusSchema,
  EndpointToggleSchema,
  KindSchema,
  ObjectMetaSchema,
  ObservedGenerationSchema,
  StringEnum,
  valueRule,
} from './common';
import type { CelRule, KubeList } from './common';
import { AGE_COLUMN, PHASE_COLUMN, PROGRAMMED_COLUMN } from './crd';
import type { KindDefinition } from './crd';

// Group and version live in common.ts; re-exported so each kind file holds all its constants.
export { API_GROUP, API_VERSION, API_GROUP_VERSION } from './common';

export const PASSTHROUGHMODEL_KIND = 'PassthroughModel';
export const PASSTHROUGHMODEL_PLURAL = 'passthroughmodels';
export const PASSTHROUGHMODEL_SINGULAR = 'passthroughmodel';
export const PASSTHROUGHMODEL_LIST_KIND = 'PassthroughModelList';
export const PASSTHROUGHMODEL_SHORT_NAMES = ['ptm'];

/** The upstream API a PassthroughModel talks to (each maps to an Envoy AI Gateway schema). */
export const BACKEND_TYPES = ['OpenAI', 'Bedrock', 'Anthropic', 'AzureOpenAI'] as const;
export type BackendType = (typeof BACKEND_TYPES)[number];

/** How the gateway authenticates to the provider. */
export const CREDENTIAL_TYPES = ['APIKey', 'WorkloadIdentity'] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

export const PASSTHROUGHMODEL_PHASES = ['Pending', 'Ready', 'Degraded', 'Error'] as const;
export type PassthroughModelPhase = (typeof PASSTHROUGHMODEL_PHASES)[number];

/** The Secret key that holds the provider API key (as upstream). */
export const CREDENTIAL_SECRET_KEY = 'apiKey';

/** Defaults the API server applies, plus the ones the operator derives (hostname per backend). */
export const PASSTHROUGHMODEL_DEFAULTS = {
  backendType: 'OpenAI' as BackendType,
  port: 443,
  schemaVersion: 'v1',
  /** Hostname used for the Anthropic backend when spec.provider.hostname is omitted. */
  anthropicHostname: 'api.anthropic.com',
};

export const PASSTHROUGHMODEL_LIMITS = { maxDeclaredModels: 128, maxModelIdLength: 256, maxHostnameLength: 254 };

/** The backend type in CEL, applying the default when `backend` is omitted. */
export const BACKEND_TYPE = (obj: string) => `(has(${obj}.backend) ? ${obj}.backend.type : 'OpenAI')`;

/** The CEL test "the value contains whitespace"; other hostname rules stand back when it holds. */
export const HAS_SPACE = "self.matches('\\\\s')";
const H = 'spec.provider.hostname';

/** Hostname rules, one message per mistake; seed 001 lists the cases older webhooks let through. */
export function hostnameRules(pathField: string): CelRule[] {
  return [
  { rule: `!${HAS_SPACE}`, message: `${H} contains whitespace (a space, tab or line break); remove it` },
  valueRule(
    `${HAS_SPACE} || !self.contains('://')`,
    H,
    'is a URL; set only the host name (for example api.openai.com) and put a path prefix in ' + pathField,
  ),
  valueRule(`${HAS_SPACE} || self.contains('://') || !self.contains('/')`, H, `has a path; put the path prefix in ${pathField}`),
  valueRule(`${HAS_SPACE} || self.contains('://') || !self.contains(':')`, H, 'has a port; put the port in spec.provider.port'),
  valueRule(`${HAS_SPACE} || !self.contains('_')`, H, "contains an underscore; DNS host names allow only letters, digits, '-' and '.'"),
  valueRule(`${HAS_SPACE} || !(self.startsWith('.') || self.contains('..'))`, H, 'has an empty label; remove the extra dot'),
  // The operator lower-cases the name and removes one trailing dot, so both are accepted here.
  // The other rules (and minLength for '') already explain the other mistakes.
  valueRule(
    `self == '' || ${HAS_SPACE} || self.contains('://') || self.contains('/') || self.contains(':') || self.contains('_') || self.startsWith('.') || self.contains('..') || ` +
      "self.lowerAscii().matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\\\.?$')",
    H,
    "is not a DNS name; use labels of letters, digits and '-' separated by dots, each starting and ending with a letter or digit",
  ),
];
}

export const HOSTNAME_RULES: CelRule[] = hostnameRules('spec.provider.schemaVersion');

export const BedrockSchema = Type.Object(
  {
    region: Type.String({
      description: 'region is the AWS region of the Bedrock runtime endpoint and of SigV4 signing, for example us-east-1.',
      minLength: 1,
      maxLength: 63,
      ...cel(
        valueRule(
          "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
          'spec.provider.backend.bedrock.region',
          'is not a region name; use the lower-case AWS region code such as us-east-1',
        ),
      ),
    }),
  },
  { description: 'bedrock holds the AWS Bedrock settings (required when type is Bedrock).' },
);

export const AzureOpenAISchema = Type.Object(
  {
    apiVersion: Type.String({
      description: 'apiVersion is the Azure OpenAI api-version query parameter, for example 2025-01-01-preview.',
      minLength: 1,
      maxLength: 64,
      pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$',
    }),
  },
  { description: 'azureOpenAI holds the Azure OpenAI settings (required when type is AzureOpenAI).' },
);

export const BackendSchema = Type.Object(
  {
    type: StringEnum(BACKEND_TYPES, {
      description:
        'type is the upstream API: OpenAI (any OpenAI-compatible host), Bedrock (AWS Bedrock Converse, hostname derived from the region), Anthropic (Messages API, default host api.anthropic.com) or AzureOpenAI (Azure OpenAI deployments). Immutable.',
      default: PASSTHROUGHMODEL_DEFAULTS.backendType,
    }),
    bedrock: Type.Optional(BedrockSchema),
    azureOpenAI: Type.Optional(AzureOpenAISchema),
  },
  {
    description: 'backend selects the upstream API schema. Omitted means OpenAI, the behaviour of objects written before backends existed.',
    ...cel(
      {
        rule: "self.type != 'Bedrock' || has(self.bedrock)",
        message: 'spec.provider.backend.bedrock.region is required when spec.provider.backend.type is Bedrock; set it to the AWS region, for example us-east-1',
      },
      {
        rule: "!has(self.bedrock) || self.type == 'Bedrock'",
        message: 'spec.provider.backend.bedrock is only valid when spec.provider.backend.type is Bedrock; remove it or change the type',
      },
      {
        rule: "self.type != 'AzureOpenAI' || has(self.azureOpenAI)",
        message:
          'spec.provider.backend.azureOpenAI.apiVersion is required when spec.provider.backend.type is AzureOpenAI; set it to the api-version, for example 2025-01-01-preview',
      },
      {
        rule: "!has(self.azureOpenAI) || self.type == 'AzureOpenAI'",
        message: 'spec.provider.backend.azureOpenAI is only valid when spec.provider.backend.type is AzureOpenAI; remove it or change the type',
      },
    ),
  },
);

export const PassthroughProviderSchema = Type.Object(
  {
    backend: Type.Optional(BackendSchema),
    credential: Type.Optional(
      Type.Object(
        {
          type: StringEnum(CREDENTIAL_TYPES, {
            description: 'type is APIKey (a Secret named by credentialSecretName) or WorkloadIdentity (the gateway\'s cloud identity; Bedrock only).',
          }),
        },
        { description: 'credential selects how the gateway authenticates upstream. Omitted means APIKey, or WorkloadIdentity for Bedrock.' },
      ),
    ),
    hostname: Type.Optional(
      Type.String({
        description:
          'hostname is the bare DNS name of the provider, for example openrouter.ai: no scheme, port, path or whitespace. Upper case and one trailing dot are accepted and normalised. Required for OpenAI and AzureOpenAI; Bedrock derives it from the region and Anthropic defaults to api.anthropic.com.',
        minLength: 1,
        maxLength: PASSTHROUGHMODEL_LIMITS.maxHostnameLength,
        ...cel(...HOSTNAME_RULES),
      }),
    ),
    port: Type.Optional(
      Type.Integer({
        description: 'port of the provider endpoint; TLS is always used.',
        format: 'int32',
        minimum: 1,
        maximum: 65535,
        default: PASSTHROUGHMODEL_DEFAULTS.port,
      }),
    ),
    schemaVersion: Type.Optional(
      Type.String({
        description:
          'schemaVersion is the API path prefix of the provider (OpenAI and Anthropic backends): v1 for api.openai.com, api/v1 for OpenRouter. It becomes the gateway schema prefix /<schemaVersion>.',
        default: PASSTHROUGHMODEL_DEFAULTS.schemaVersion,
        maxLength: 128,
        ...cel(
          valueRule(
            `!self.contains('://') && !${HAS_SPACE}`,
            'spec.provider.schemaVersion',
            'must be a path prefix such as v1 or api/v1, not a URL, and contain no whitespace',
          ),
        ),
      }),
    ),
    credentialSecretName: Type.Optional(
      Type.String({
        description: `credentialSecretName names a Secret in the same namespace whose "${CREDENTIAL_SECRET_KEY}" key holds the provider API key. The gateway injects it upstream; callers never see it.`,
        minLength: 1,
        maxLength: 253,
      }),
    ),
  },
  {
    description: 'provider selects the upstream backend, its address and the credential the gateway uses.',
    ...cel(
      {
        rule: `${BACKEND_TYPE('self')} != 'Bedrock' || !has(self.credentialSecretName)`,
        message:
          'spec.provider.credentialSecretName must be omitted for Bedrock, which signs requests with the gateway\'s AWS workload identity; remove it',
      },
      {
        rule: `${BACKEND_TYPE('self')} != 'Bedrock' || !has(self.credential) || self.credential.type == 'WorkloadIdentity'`,
        message: 'spec.provider.credential.type must be WorkloadIdentity for Bedrock; remove spec.provider.credential or set it to WorkloadIdentity',
      },
      {
        rule: `${BACKEND_TYPE('self')} != 'Bedrock' || !has(self.schemaVersion) || self.schemaVersion == 'v1'`,
        message: 'spec.provider.schemaVersion applies only to OpenAI and Anthropic backends; remove it for Bedrock, which uses its native paths',
      },
      {
        rule:
          `${BACKEND_TYPE('self')} != 'Bedrock' || !has(self.hostname) || !has(self.backend.bedrock) || !self.hostname.lowerAscii().contains('.amazonaws.') || self.hostname.lowerAscii().contains(self.backend.bedrock.region)`,
        message:
          'spec.provider.hostname: an amazonaws endpoint must contain the region in spec.provider.backend.bedrock.region, because requests are signed for that region; fix the hostname or the region',
      },
      {
        rule: `${BACKEND_TYPE('self')} == 'Bedrock' || !has(self.credential) || self.credential.type == 'APIKey'`,
        messageExpression: `'spec.provider.credential.type: WorkloadIdentity is supported only for Bedrock; use APIKey with spec.provider.credentialSecretName for the ' + ${BACKEND_TYPE('self')} + ' backend'`,
      },
      {
        rule: `${BACKEND_TYPE('self')} == 'Bedrock' || has(self.credentialSecretName)`,
        messageExpression: `'spec.provider.credentialSecretName is required for the ' + ${BACKEND_TYPE('self')} + ' backend; name a Secret in this namespace whose apiKey key holds the provider API key'`,
      },
      {
        rule: `!(${BACKEND_TYPE('self')} in ['OpenAI', 'AzureOpenAI']) || has(self.hostname)`,
        messageExpression: `'spec.provider.hostname is required for the ' + ${BACKEND_TYPE('self')} + ' backend; set the provider host name, for example api.openai.com'`,
      },
    ),
  },
);

export const PassthroughModelsSchema = Type.Object(
  {
    catchAll: Type.Optional(
      Type.Boolean({
        description:
          'catchAll routes every model id that no more specific route claims to this provider. Served LLMModels always win.',
      }),
    ),
    declared: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: PASSTHROUGHMODEL_LIMITS.maxModelIdLength, ...cel(...modelIdRules('spec.models.declared')) }), {
        description: 'declared model ids get explicit routes and are listed by the gateway /v1/models endpoint.',
        maxItems: PASSTHROUGHMODEL_LIMITS.maxDeclaredModels,
      }),
    ),
  },
  { description: 'models selects which model ids are routed to this provider.' },
);

export const PassthroughEndpointsSchema = Type.Object(
  {
    external: Type.Optional(EndpointToggleSchema('external', false)),
    internal: Type.Optional(EndpointToggleSchema('internal', false)),
  },
  {
    description: 'endpoints switches the external (API key) and internal (JWT) endpoints on or off; both are on when omitted.',
    ...cel({
      rule:
        '!(has(self.external) && has(self.external.enabled) && !self.external.enabled && has(self.internal) && has(self.internal.enabled) && !self.internal.enabled)',
      message: 'spec.endpoints: both endpoints are disabled, so nobody could reach the provider; enable spec.endpoints.external or spec.endpoints.internal',
    }),
  },
);

export const PassthroughModelSpecSchema = Type.Object(
  {
    provider: PassthroughProviderSchema,
    models: Type.Optional(PassthroughModelsSchema),
    access: AccessSchema,
    endpoints: Type.Optional(PassthroughEndpointsSchema),
  },
  {
    description: 'spec is the desired state of the PassthroughModel.',
    ...cel(
      {
        rule:
          'has(self.models) && ((has(self.models.catchAll) && self.models.catchAll) || (has(self.models.declared) && size(self.models.declared) > 0))',
        message: 'spec.models: no model would be routed; list model ids in spec.models.declared or set spec.models.catchAll: true',
      },
      {
        rule: `${BACKEND_TYPE('self.provider')} == ${BACKEND_TYPE('oldSelf.provider')}`,
        messageExpression: `'spec.provider.backend.type is immutable (was ' + ${BACKEND_TYPE('oldSelf.provider')} + '); create a new PassthroughModel for another backend'`,
        fieldPath: '.provider',
      },
    ),
  },
);
export type PassthroughModelSpec = Static<typeof PassthroughModelSpecSchema>;

export const PassthroughProviderStatusSchema = Type.Object(
  {
    backendType: Type.Optional(StringEnum(BACKEND_TYPES, { description: 'backendType is the effective backend type.' })),
    hostname: Type.Optional(Type.String({ description: 'hostname is the effective, normalised provider host name.' })),
    port: Type.Optional(Type.Integer({ description: 'port is the effective provider port.', format: 'int32' })),
  },
  { description: 'provider records the effective upstream address after defaults and normalisation.' },
);

export const PassthroughModelStatusSchema = Type.Object(
  {
    phase: Type.Optional(StringEnum(PASSTHROUGHMODEL_PHASES, { description: 'phase summarises the state: Pending, Ready, Degraded or Error.' })),
    conditions: Type.Optional(ConditionsSchema),
    observedGeneration: Type.Optional(ObservedGenerationSchema),
    endpoints: Type.Optional(EndpointStatusSchema),
    provider: Type.Optional(PassthroughProviderStatusSchema),
  },
  { description: 'status is the observed state of the PassthroughModel, written by the operator.' },
);
export type PassthroughModelStatus = Static<typeof PassthroughModelStatusSchema>;

export const PassthroughModelSchema = Type.Object(
  {
    apiVersion: ApiVersionSchema,
    kind: KindSchema(PASSTHROUGHMODEL_KIND),
    metadata: ObjectMetaSchema,
    spec: PassthroughModelSpecSchema,
    status: Type.Optional(PassthroughModelStatusSchema),
  },
  { description: 'PassthroughModel publishes models of an external provider through the shared gateway endpoints.' },
);
export type PassthroughModel = Static<typeof PassthroughModelSchema>;
export type PassthroughModelList = KubeList<PassthroughModel>;

/** The backend type of `spec`, applying the default (OpenAI when backend is omitted). */
export function passthroughBackendType(spec: Pick<PassthroughModelSpec, 'provider'>): BackendType {
  return spec.provider.backend?.type ?? PASSTHROUGHMODEL_DEFAULTS.backendType;
}

/** The credential type of `spec`, applying the default (WorkloadIdentity for Bedrock, else APIKey). */
export function passthroughCredentialType(spec: Pick<PassthroughModelSpec, 'provider'>): CredentialType {
  if (spec.provider.credential) return spec.provider.credential.type;
  return passthroughBackendType(spec) === 'Bedrock' ? 'WorkloadIdentity' : 'APIKey';
}

/** What the CRD builder needs to know about PassthroughModel. */
export const PASSTHROUGHMODEL_DEFINITION: KindDefinition = {
  kind: PASSTHROUGHMODEL_KIND,
  listKind: PASSTHROUGHMODEL_LIST_KIND,
  plural: PASSTHROUGHMODEL_PLURAL,
  singular: PASSTHROUGHMODEL_SINGULAR,
  shortNames: PASSTHROUGHMODEL_SHORT_NAMES,
  schema: PassthroughModelSchema,
  printerColumns: [
    PHASE_COLUMN,
    { name: 'Backend', type: 'string', jsonPath: '.status.provider.backendType', description: 'Upstream API type.' },
    { name: 'Provider', type: 'string', jsonPath: '.status.provider.hostname', description: 'Effective provider host name.' },
    PROGRAMMED_COLUMN,
    AGE_COLUMN,
  ],
};
