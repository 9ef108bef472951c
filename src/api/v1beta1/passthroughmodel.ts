// PassthroughModel v1beta1: the credential in one object (`credential.type` and
// `credential.secretRef.name`), and the legacy `schemaVersion` replaced by the gateway's own
// `pathPrefix` without a default on every backend (docs/api-versions.md, P1–P3).
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { AccessSchema, API_VERSION_V1BETA1, apiVersionSchema, cel, KindSchema, ObjectMetaSchema, ObjectNameSchema, StringEnum, valueRule } from '../common';
import type { KubeList } from '../common';
import {
  BACKEND_TYPE,
  BackendSchema,
  CREDENTIAL_SECRET_KEY,
  CREDENTIAL_TYPES,
  type CredentialType,
  HAS_SPACE,
  hostnameRules,
  PASSTHROUGHMODEL_DEFAULTS,
  PASSTHROUGHMODEL_KIND,
  PASSTHROUGHMODEL_LIMITS,
  PassthroughEndpointsSchema,
  PassthroughModelSchema,
  PassthroughModelSpecSchema,
  PassthroughModelsSchema,
  PassthroughModelStatusSchema,
} from '../passthroughmodel';
import { PassthroughRoutingSchema } from '../routing';

const PATH_PREFIX_FIELD = 'spec.provider.pathPrefix';

export const PassthroughCredentialV1beta1Schema = Type.Object(
  {
    type: Type.Optional(
      StringEnum(CREDENTIAL_TYPES, {
        description:
          "type is APIKey (the Secret in secretRef) or WorkloadIdentity (the gateway's cloud identity; Bedrock only). Omitted means WorkloadIdentity for Bedrock and APIKey otherwise.",
      }),
    ),
    secretRef: Type.Optional(
      Type.Object(
        {
          name: ObjectNameSchema(
            `name of a Secret in the same namespace whose "${CREDENTIAL_SECRET_KEY}" key holds the provider API key. The gateway injects it upstream; callers never see it.`,
          ),
        },
        { description: 'secretRef names the Secret holding the API key (APIKey credentials).' },
      ),
    ),
  },
  { description: 'credential is how the gateway authenticates upstream: an API key from a Secret, or the workload identity (Bedrock).' },
);

export const PassthroughProviderV1beta1Schema = Type.Object(
  {
    backend: Type.Optional(BackendSchema),
    credential: Type.Optional(PassthroughCredentialV1beta1Schema),
    hostname: Type.Optional(
      Type.String({
        description:
          'hostname is the bare DNS name of the provider, for example openrouter.ai: no scheme, port, path or whitespace. Upper case and one trailing dot are accepted and normalised. Required for OpenAI and AzureOpenAI; Bedrock derives it from the region and Anthropic defaults to api.anthropic.com.',
        minLength: 1,
        maxLength: PASSTHROUGHMODEL_LIMITS.maxHostnameLength,
        ...cel(...hostnameRules(PATH_PREFIX_FIELD)),
      }),
    ),
    port: PassthroughModelSpecSchema.properties.provider.properties.port,
    pathPrefix: Type.Optional(
      Type.String({
        description: `pathPrefix is the API path prefix of the provider (OpenAI and Anthropic backends), the gateway's schema prefix: /v1 for api.openai.com, /api/v1 for OpenRouter. Omitted means /${PASSTHROUGHMODEL_DEFAULTS.schemaVersion} for those backends; Bedrock and Azure OpenAI use their native paths.`,
        minLength: 1,
        maxLength: 129,
        ...cel(
          valueRule(
            `self.startsWith('/') && !self.contains('://') && !${HAS_SPACE}`,
            PATH_PREFIX_FIELD,
            'must be a path prefix starting with / such as /v1 or /api/v1, not a URL, and contain no whitespace',
          ),
        ),
      }),
    ),
  },
  {
    description: 'provider selects the upstream backend, its address and the credential the gateway uses.',
    ...cel(
      {
        rule: `${BACKEND_TYPE('self')} != 'Bedrock' || !has(self.credential) || !has(self.credential.secretRef)`,
        message: "spec.provider.credential.secretRef must be omitted for Bedrock, which signs requests with the gateway's AWS workload identity; remove it",
      },
      {
        rule: `${BACKEND_TYPE('self')} != 'Bedrock' || !has(self.credential) || !has(self.credential.type) || self.credential.type == 'WorkloadIdentity'`,
        message: 'spec.provider.credential.type must be WorkloadIdentity for Bedrock; remove it or set it to WorkloadIdentity',
      },
      {
        rule: `${BACKEND_TYPE('self')} != 'Bedrock' || !has(self.pathPrefix)`,
        message: 'spec.provider.pathPrefix applies only to OpenAI-compatible and Anthropic backends; remove it for Bedrock, which uses its native paths',
      },
      {
        rule:
          `${BACKEND_TYPE('self')} != 'Bedrock' || !has(self.hostname) || !has(self.backend.bedrock) || !self.hostname.lowerAscii().contains('.amazonaws.') || self.hostname.lowerAscii().contains(self.backend.bedrock.region)`,
        message:
          'spec.provider.hostname: an amazonaws endpoint must contain the region in spec.provider.backend.bedrock.region, because requests are signed for that region; fix the hostname or the region',
      },
      {
        rule: `${BACKEND_TYPE('self')} == 'Bedrock' || !has(self.credential) || !has(self.credential.type) || self.credential.type == 'APIKey'`,
        messageExpression: `'spec.provider.credential.type: WorkloadIdentity is supported only for Bedrock; use APIKey with spec.provider.credential.secretRef for the ' + ${BACKEND_TYPE('self')} + ' backend'`,
      },
      {
        rule: `${BACKEND_TYPE('self')} == 'Bedrock' || (has(self.credential) && has(self.credential.secretRef))`,
        messageExpression: `'spec.provider.credential.secretRef.name is required for the ' + ${BACKEND_TYPE('self')} + ' backend; name a Secret in this namespace whose apiKey key holds the provider API key'`,
      },
      {
        rule: `!(${BACKEND_TYPE('self')} in ['OpenAI', 'AzureOpenAI']) || has(self.hostname)`,
        messageExpression: `'spec.provider.hostname is required for the ' + ${BACKEND_TYPE('self')} + ' backend; set the provider host name, for example api.openai.com'`,
      },
    ),
  },
);

export const PassthroughModelSpecV1beta1Schema = Type.Object(
  {
    provider: PassthroughProviderV1beta1Schema,
    models: Type.Optional(PassthroughModelsSchema),
    access: AccessSchema,
    endpoints: Type.Optional(PassthroughEndpointsSchema),
    routing: Type.Optional(PassthroughRoutingSchema),
  },
  { description: PassthroughModelSpecSchema.description, 'x-kubernetes-validations': PassthroughModelSpecSchema['x-kubernetes-validations'] as unknown },
);
export type PassthroughModelSpecV1beta1 = Static<typeof PassthroughModelSpecV1beta1Schema>;

export const PassthroughModelV1beta1Schema = Type.Object(
  {
    apiVersion: apiVersionSchema(API_VERSION_V1BETA1),
    kind: KindSchema(PASSTHROUGHMODEL_KIND),
    metadata: ObjectMetaSchema,
    spec: PassthroughModelSpecV1beta1Schema,
    status: Type.Optional(PassthroughModelStatusSchema),
  },
  { description: PassthroughModelSchema.description },
);
export type PassthroughModelV1beta1 = Static<typeof PassthroughModelV1beta1Schema>;
export type PassthroughModelV1beta1List = KubeList<PassthroughModelV1beta1>;

/** The credential type of a v1beta1 `spec`, applying the default (WorkloadIdentity for Bedrock, else APIKey). */
export function passthroughCredentialTypeV1beta1(spec: Pick<PassthroughModelSpecV1beta1, 'provider'>): CredentialType {
  if (spec.provider.credential?.type) return spec.provider.credential.type;
  return (spec.provider.backend?.type ?? PASSTHROUGHMODEL_DEFAULTS.backendType) === 'Bedrock' ? 'WorkloadIdentity' : 'APIKey';
}
