// Resolves a PassthroughModel's provider block into what the gateway objects need: the effective
// host and port, the Envoy AI Gateway API schema (with its path prefix) and the credential sent
// upstream. All defaults of the upstream pack apply here, so an object written for it means the
// same thing.
import { CREDENTIAL_SECRET_KEY, PASSTHROUGHMODEL_DEFAULTS } from '../../api/passthroughmodel';
import type { BackendType } from '../../api/passthroughmodel';
import { passthroughCredentialTypeV1beta1 } from '../../api/v1beta1/passthroughmodel';
import { bedrockRuntimeHostname, checkBedrockHostnameOverride, validateBedrockRegion } from './bedrock';
import { failed, ok, Result, TranslationError, translationError } from './errors';
import { normalizeHostname } from './hostname';
import type { AIServiceBackendSchema, BackendSecurityPolicyType } from './objects';
import type { PassthroughModelSpecV1beta1 } from '../../api/v1beta1';

/** The upstream credential, in the terms of a BackendSecurityPolicy. */
export type UpstreamCredential =
  | { readonly type: Exclude<BackendSecurityPolicyType, 'AWSCredentials'>; readonly secretName: string }
  | { readonly type: 'AWSCredentials'; readonly region: string };

export interface ResolvedProvider {
  readonly backendType: BackendType;
  /** Normalised host name (lower case, no trailing dot). */
  readonly hostname: string;
  readonly port: number;
  readonly schema: AIServiceBackendSchema;
  readonly credential: UpstreamCredential;
}

const PATH_PREFIX_FIELD = 'spec.provider.pathPrefix';
const PATH_SEGMENTS = /^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/;

/**
 * The AI Gateway `schema.prefix` for `pathPrefix`: `"/" + trim(pathPrefix, "/")`, so `/api/v1`
 * reaches `/api/v1/chat/completions` and an omitted prefix means `/v1`. `/` gives paths straight
 * under the host: the prefix cannot be left out for that, because the AI Gateway reads a missing
 * OpenAI/Anthropic prefix as `v1`.
 */
export function schemaPrefix(pathPrefix: string | undefined): Result<string> {
  const trimmed = (pathPrefix ?? PASSTHROUGHMODEL_DEFAULTS.schemaVersion).replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return ok('/');
  if (!PATH_SEGMENTS.test(trimmed)) {
    return failed(
      translationError(
        PATH_PREFIX_FIELD,
        `${JSON.stringify(pathPrefix)} is not a path prefix; use path segments such as /v1 or /api/v1 (no scheme, host, query or spaces)`,
      ),
    );
  }
  return ok(`/${trimmed}`);
}

export function resolvePassthroughProvider(spec: Pick<PassthroughModelSpecV1beta1, 'provider'>): Result<ResolvedProvider> {
  const { provider } = spec;
  const backendType = provider.backend?.type ?? PASSTHROUGHMODEL_DEFAULTS.backendType;
  const credentialType = passthroughCredentialTypeV1beta1(spec);
  const secretName = provider.credential?.secretRef?.name;
  const port = provider.port ?? PASSTHROUGHMODEL_DEFAULTS.port;
  const errors: TranslationError[] = [];
  const collect = <T>(result: Result<T>): T | undefined => {
    if (result.ok) return result.value;
    errors.push(...result.errors);
    return undefined;
  };

  const override = provider.hostname === undefined ? undefined : collect(normalizeHostname(provider.hostname, 'spec.provider.hostname'));
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    errors.push(translationError('spec.provider.port', `${port} is not a TCP port; use a number from 1 to 65535 (443 for HTTPS providers)`));
  }

  let hostname: string | undefined;
  let schema: AIServiceBackendSchema | undefined;
  let credential: UpstreamCredential | undefined;
  const secretCredential = (type: Exclude<BackendSecurityPolicyType, 'AWSCredentials'>): UpstreamCredential | undefined => {
    if (credentialType !== 'APIKey') {
      errors.push(
        translationError(
          'spec.provider.credential.type',
          `WorkloadIdentity is supported only for Bedrock; use APIKey with spec.provider.credential.secretRef.name for the ${backendType} backend`,
        ),
      );
      return undefined;
    }
    if (!secretName) {
      errors.push(
        translationError(
          'spec.provider.credential.secretRef.name',
          `is required for the ${backendType} backend; name a Secret in this namespace whose "${CREDENTIAL_SECRET_KEY}" key holds the provider API key`,
        ),
      );
      return undefined;
    }
    return { type, secretName };
  };
  const requiredHostname = (): string | undefined => {
    if (provider.hostname === undefined) {
      errors.push(translationError('spec.provider.hostname', `is required for the ${backendType} backend; set the provider host name, for example api.openai.com`));
    }
    return override;
  };

  switch (backendType) {
    case 'OpenAI': {
      hostname = requiredHostname();
      const prefix = collect(schemaPrefix(provider.pathPrefix));
      if (prefix !== undefined) schema = { name: 'OpenAI', prefix };
      credential = secretCredential('APIKey');
      break;
    }
    case 'Anthropic': {
      hostname = provider.hostname === undefined ? PASSTHROUGHMODEL_DEFAULTS.anthropicHostname : override;
      const prefix = collect(schemaPrefix(provider.pathPrefix));
      if (prefix !== undefined) schema = { name: 'Anthropic', prefix };
      credential = secretCredential('AnthropicAPIKey');
      break;
    }
    case 'AzureOpenAI': {
      hostname = requiredHostname();
      const apiVersion = provider.backend?.azureOpenAI?.apiVersion;
      if (!apiVersion) {
        errors.push(
          translationError(
            'spec.provider.backend.azureOpenAI.apiVersion',
            'is required for the AzureOpenAI backend; set the Azure OpenAI api-version, for example 2025-01-01-preview',
          ),
        );
      }
      // Azure paths are fixed (/openai/deployments/...); the API version travels as a query parameter.
      schema = { name: 'AzureOpenAI', version: apiVersion ?? '' };
      credential = secretCredential('AzureAPIKey');
      break;
    }
    case 'Bedrock': {
      const region = collect(validateBedrockRegion(provider.backend?.bedrock?.region));
      if (provider.pathPrefix !== undefined) {
        errors.push(
          translationError(
            PATH_PREFIX_FIELD,
            `${JSON.stringify(provider.pathPrefix)} applies only to OpenAI and Anthropic backends; remove it for Bedrock, which uses its native paths`,
          ),
        );
      }
      if (provider.credential?.secretRef !== undefined) {
        errors.push(
          translationError(
            'spec.provider.credential.secretRef',
            "must be omitted for Bedrock, which signs requests with the gateway's AWS workload identity; remove it",
          ),
        );
      }
      if (credentialType !== 'WorkloadIdentity') {
        errors.push(translationError('spec.provider.credential.type', 'must be WorkloadIdentity for Bedrock; remove spec.provider.credential or set it to WorkloadIdentity'));
      }
      if (region !== undefined) {
        hostname = override === undefined ? (provider.hostname === undefined ? bedrockRuntimeHostname(region) : undefined) : collect(checkBedrockHostnameOverride(override, region));
        credential = { type: 'AWSCredentials', region };
      }
      // Bedrock requests use the native Converse/InvokeModel paths: no prefix.
      schema = { name: 'AWSBedrock' };
      break;
    }
  }

  if (errors.length > 0 || hostname === undefined || schema === undefined || credential === undefined) {
    return failed(...errors);
  }
  return ok({ backendType, hostname, port, schema, credential });
}
