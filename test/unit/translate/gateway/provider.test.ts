import type { PassthroughModelSpecV1beta1 as PassthroughModelSpec } from '../../../../src/api/v1beta1';
import { bedrockRuntimeHostname, validateBedrockRegion } from '../../../../src/translate/gateway/bedrock';
import { resolvePassthroughProvider, schemaPrefix } from '../../../../src/translate/gateway/provider';

type Provider = PassthroughModelSpec['provider'];
const resolve = (provider: Provider) => resolvePassthroughProvider({ provider });
const messages = (provider: Provider) => {
  const result = resolve(provider);
  return result.ok ? [] : result.errors.map((e) => e.message);
};

describe('schemaPrefix: pathPrefix becomes schema.prefix', () => {
  test.each([
    [undefined, '/v1'],
    ['v1', '/v1'],
    ['api/v1', '/api/v1'],
    ['/api/v1', '/api/v1'],
    ['api/v1/', '/api/v1'],
    ['//v1beta/openai//', '/v1beta/openai'],
    ['compatibility/v1', '/compatibility/v1'],
    ['', '/'],
    ['/', '/'],
  ])('%j -> %j', (version, prefix) => {
    expect(schemaPrefix(version)).toEqual({ ok: true, value: prefix });
  });

  test.each(['https://x/v1', 'api v1', 'v1?x=1', 'api//v1'])('%j is refused', (version) => {
    const result = schemaPrefix(version);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0].message).toMatch(/^spec\.provider\.pathPrefix: .* is not a path prefix; use path segments such as \/v1 or \/api\/v1/);
  });
});

describe('resolvePassthroughProvider', () => {
  test('OpenAI: normalised host, default port 443, prefix /v1, APIKey credential', () => {
    expect(resolve({ hostname: 'API.OpenAI.com.', credential: { secretRef: { name: 'openai-key' } } })).toEqual({
      ok: true,
      value: {
        backendType: 'OpenAI',
        hostname: 'api.openai.com',
        port: 443,
        schema: { name: 'OpenAI', prefix: '/v1' },
        credential: { type: 'APIKey', secretName: 'openai-key' },
      },
    });
  });

  test('OpenAI: schemaVersion api/v1 gives prefix /api/v1 and an explicit port is kept', () => {
    const result = resolve({ hostname: 'openrouter.ai', port: 8443, pathPrefix: '/api/v1', credential: { secretRef: { name: 'k' } } });
    expect(result.ok && result.value.schema).toEqual({ name: 'OpenAI', prefix: '/api/v1' });
    expect(result.ok && result.value.port).toBe(8443);
  });

  test('OpenAI: pathPrefix / gives prefix / (a missing prefix would mean v1 to the AI Gateway)', () => {
    const result = resolve({ hostname: 'api.deepseek.com', pathPrefix: '/', credential: { secretRef: { name: 'k' } } });
    expect(result.ok && result.value.schema).toEqual({ name: 'OpenAI', prefix: '/' });
  });

  test('OpenAI: hostname and credential are required', () => {
    expect(messages({})).toEqual([
      'spec.provider.hostname: is required for the OpenAI backend; set the provider host name, for example api.openai.com',
      'spec.provider.credential.secretRef.name: is required for the OpenAI backend; name a Secret in this namespace whose "apiKey" key holds the provider API key',
    ]);
  });

  test('OpenAI: WorkloadIdentity is refused', () => {
    expect(messages({ hostname: 'api.openai.com', credential: { type: 'WorkloadIdentity' } })).toContain(
      'spec.provider.credential.type: WorkloadIdentity is supported only for Bedrock; use APIKey with spec.provider.credential.secretRef.name for the OpenAI backend',
    );
  });

  test('a bad hostname and a bad port are both reported', () => {
    expect(messages({ hostname: 'api.openai.com:443', port: 70000, credential: { secretRef: { name: 'k' } } })).toEqual([
      'spec.provider.hostname: "api.openai.com:443" has a port; put the port in spec.provider.port',
      'spec.provider.port: 70000 is not a TCP port; use a number from 1 to 65535 (443 for HTTPS providers)',
    ]);
  });

  test('Anthropic: default host api.anthropic.com, prefix from schemaVersion, AnthropicAPIKey', () => {
    expect(resolve({ backend: { type: 'Anthropic' }, credential: { secretRef: { name: 'a-key' } } })).toEqual({
      ok: true,
      value: {
        backendType: 'Anthropic',
        hostname: 'api.anthropic.com',
        port: 443,
        schema: { name: 'Anthropic', prefix: '/v1' },
        credential: { type: 'AnthropicAPIKey', secretName: 'a-key' },
      },
    });
  });

  test('AzureOpenAI: version is the api-version, no prefix, AzureAPIKey', () => {
    const result = resolve({ backend: { type: 'AzureOpenAI', azureOpenAI: { apiVersion: '2025-01-01-preview' } }, hostname: 'r.openai.azure.com', credential: { secretRef: { name: 'az' } }, pathPrefix: '/v1' });
    expect(result).toEqual({
      ok: true,
      value: {
        backendType: 'AzureOpenAI',
        hostname: 'r.openai.azure.com',
        port: 443,
        schema: { name: 'AzureOpenAI', version: '2025-01-01-preview' },
        credential: { type: 'AzureAPIKey', secretName: 'az' },
      },
    });
  });

  test('AzureOpenAI: the api-version is required', () => {
    expect(messages({ backend: { type: 'AzureOpenAI' }, hostname: 'r.openai.azure.com', credential: { secretRef: { name: 'az' } } })).toEqual([
      'spec.provider.backend.azureOpenAI.apiVersion: is required for the AzureOpenAI backend; set the Azure OpenAI api-version, for example 2025-01-01-preview',
    ]);
  });

  test('Bedrock: host derived from the region, no prefix, AWSCredentials with the region', () => {
    expect(resolve({ backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } } })).toEqual({
      ok: true,
      value: {
        backendType: 'Bedrock',
        hostname: 'bedrock-runtime.us-east-1.amazonaws.com',
        port: 443,
        schema: { name: 'AWSBedrock' },
        credential: { type: 'AWSCredentials', region: 'us-east-1' },
      },
    });
  });

  test('Bedrock: no pathPrefix, no schema prefix (a v1alpha1 object\'s default schemaVersion v1 converts to none)', () => {
    const result = resolve({ backend: { type: 'Bedrock', bedrock: { region: 'eu-west-1' } } });
    expect(result.ok && result.value.schema).toEqual({ name: 'AWSBedrock' });
  });

  test('Bedrock: a host name override must contain the region as a label', () => {
    const ok = resolve({ backend: { type: 'Bedrock', bedrock: { region: 'us-west-2' } }, hostname: 'VPCE-1.bedrock-runtime.us-west-2.vpce.amazonaws.com.' });
    expect(ok.ok && ok.value.hostname).toBe('vpce-1.bedrock-runtime.us-west-2.vpce.amazonaws.com');
    expect(messages({ backend: { type: 'Bedrock', bedrock: { region: 'us-west-2' } }, hostname: 'bedrock-runtime.us-east-1.amazonaws.com' })).toEqual([
      'spec.provider.hostname: "bedrock-runtime.us-east-1.amazonaws.com" does not contain the region "us-west-2" of spec.provider.backend.bedrock.region; requests are signed for that region, so use a regional endpoint such as bedrock-runtime.us-west-2.amazonaws.com or fix the region',
    ]);
    expect(messages({ backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } }, hostname: 'bedrock-runtime.us-east-10.amazonaws.com' })[0]).toMatch(/does not contain the region/);
  });

  test('Bedrock: a proxy host outside amazonaws is used as given (the CRD rule checks only amazonaws hosts)', () => {
    const proxy = resolve({ backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } }, hostname: 'Bedrock-Proxy.corp.example.' });
    expect(proxy).toMatchObject({ ok: true, value: { hostname: 'bedrock-proxy.corp.example', credential: { type: 'AWSCredentials', region: 'us-east-1' } } });
  });

  test('Bedrock: region, pathPrefix, credential.secretRef and APIKey are checked', () => {
    expect(messages({ backend: { type: 'Bedrock' } })).toEqual([
      'spec.provider.backend.bedrock.region: is required for the Bedrock backend; set the AWS region, for example us-east-1',
    ]);
    expect(messages({ backend: { type: 'Bedrock', bedrock: { region: 'US_EAST_1' } } })).toEqual([
      'spec.provider.backend.bedrock.region: "US_EAST_1" is not a region name; use the lower-case AWS region code such as us-east-1',
    ]);
    expect(
      messages({ backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } }, pathPrefix: '/api/v1', credential: { type: 'APIKey', secretRef: { name: 'k' } } }),
    ).toEqual([
      'spec.provider.pathPrefix: "/api/v1" applies only to OpenAI and Anthropic backends; remove it for Bedrock, which uses its native paths',
      "spec.provider.credential.secretRef: must be omitted for Bedrock, which signs requests with the gateway's AWS workload identity; remove it",
      'spec.provider.credential.type: must be WorkloadIdentity for Bedrock; remove spec.provider.credential or set it to WorkloadIdentity',
    ]);
  });
});

describe('Bedrock runtime host per AWS partition', () => {
  test.each([
    ['us-east-1', 'bedrock-runtime.us-east-1.amazonaws.com'],
    ['eu-central-2', 'bedrock-runtime.eu-central-2.amazonaws.com'],
    ['ap-southeast-4', 'bedrock-runtime.ap-southeast-4.amazonaws.com'],
    ['us-gov-west-1', 'bedrock-runtime.us-gov-west-1.amazonaws.com'],
    ['cn-north-1', 'bedrock-runtime.cn-north-1.amazonaws.com.cn'],
    ['cn-northwest-1', 'bedrock-runtime.cn-northwest-1.amazonaws.com.cn'],
    ['us-iso-east-1', 'bedrock-runtime.us-iso-east-1.c2s.ic.gov'],
    ['us-isob-east-1', 'bedrock-runtime.us-isob-east-1.sc2s.sgov.gov'],
    ['us-isof-south-1', 'bedrock-runtime.us-isof-south-1.csp.hci.ic.gov'],
    ['eu-isoe-west-1', 'bedrock-runtime.eu-isoe-west-1.cloud.adc-e.uk'],
  ])('%s -> %s', (region, host) => {
    expect(bedrockRuntimeHostname(region)).toBe(host);
  });

  test.each(['us-east-1', 'il-central-1', 'mx-central-1'])('%s is a valid region', (region) => {
    expect(validateBedrockRegion(region)).toEqual({ ok: true, value: region });
  });

  test.each(['', 'us east 1', 'us-east-1.', '-us-east-1', 'Us-East-1'])('%j is not', (region) => {
    expect(validateBedrockRegion(region).ok).toBe(false);
  });
});
