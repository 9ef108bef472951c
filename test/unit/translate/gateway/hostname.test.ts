import { normalizeHostname, hostnameHasLabel, lowerWithoutRootDot } from '../../../../src/translate/gateway/hostname';

const FIELD = 'spec.provider.hostname';

describe('normalizeHostname accepts DNS names and normalises them', () => {
  test.each([
    ['api.openai.com', 'api.openai.com'],
    ['API.OpenAI.com', 'api.openai.com'],
    ['api.openai.com.', 'api.openai.com'],
    ['Api.OpenAI.Com.', 'api.openai.com'],
    ['localhost', 'localhost'],
    ['my-resource.openai.azure.com', 'my-resource.openai.azure.com'],
    ['a1.b-2.c3', 'a1.b-2.c3'],
    ['10.0.0.1', '10.0.0.1'],
    [`${'a'.repeat(63)}.example.com`, `${'a'.repeat(63)}.example.com`],
  ])('%j -> %j', (raw, expected) => {
    expect(normalizeHostname(raw, FIELD)).toEqual({ ok: true, value: expected });
  });
});

describe('normalizeHostname rejects what is not a DNS name, naming the field and the fix', () => {
  test.each([
    ['', 'spec.provider.hostname: is empty; set a host name (e.g. api.openai.com)'],
    ['api.openai.com:443', 'spec.provider.hostname: "api.openai.com:443" has a port; put the port in spec.provider.port'],
    ['Api.OpenAI.com:443', 'spec.provider.hostname: "Api.OpenAI.com:443" has a port; put the port in spec.provider.port'],
    ['https://api.openai.com', 'spec.provider.hostname: "https://api.openai.com" is a URL; put only the host name in spec.provider.hostname (e.g. api.openai.com) and the port in spec.provider.port'],
    ['https://api.openai.com/v1', 'is a URL'],
    ['api.openai.com/v1', 'spec.provider.hostname: "api.openai.com/v1" has a path; put only the host name here (a path prefix belongs in spec.provider.pathPrefix)'],
    ['api.openai.com/', 'has a path'],
    [' api.openai.com', 'spec.provider.hostname: " api.openai.com" contains whitespace; remove it'],
    ['api.openai.com ', 'contains whitespace'],
    ['api .openai.com', 'contains whitespace'],
    ['api.openai.com\t', 'contains whitespace'],
    ['api.openai.com\n', 'contains whitespace'],
    ['api_openai.com', 'spec.provider.hostname: "api_openai.com" contains an underscore, which DNS names cannot have; use "-" or the provider\'s real host name'],
    ['my_host', 'contains an underscore'],
    ['api..openai.com', 'spec.provider.hostname: "api..openai.com" has an empty label (two dots in a row, or a leading dot); remove the extra dot'],
    ['.api.openai.com', 'has an empty label'],
    ['api.openai.com..', 'has an empty label'],
    ['.', 'has an empty label'],
    ['-api.openai.com', 'has the label "-api", which is not a DNS label'],
    ['api-.openai.com', 'has the label "api-", which is not a DNS label'],
    ['api.open*ai.com', 'has the label "open*ai", which is not a DNS label'],
    ['api.openai.com?x=1', 'has a query or fragment'],
    ['api.openai.com#frag', 'has a query or fragment'],
    ['user@api.openai.com', 'has user information'],
    [`${'a'.repeat(64)}.example.com`, 'longer than 63 characters'],
    [`${'abcdefghi.'.repeat(26)}com`, 'is longer than 253 characters'],
  ])('%j', (raw, expected) => {
    const result = normalizeHostname(raw, FIELD);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0].field).toBe(FIELD);
    expect(result.errors[0].message).toContain(expected);
    expect(result.errors[0].message.startsWith(`${FIELD}: `)).toBe(true);
  });

  test('the field name in errors is the one passed in', () => {
    const result = normalizeHostname('bad_host', 'platform.external.hostname');
    expect(result.ok || result.errors[0].field).toBe('platform.external.hostname');
  });
});

test('hostnameHasLabel matches whole labels only', () => {
  expect(hostnameHasLabel('bedrock-runtime.us-east-1.amazonaws.com', 'us-east-1')).toBe(true);
  expect(hostnameHasLabel('bedrock-runtime.us-east-10.amazonaws.com', 'us-east-1')).toBe(false);
  expect(hostnameHasLabel('us-east-1', 'us-east-1')).toBe(true);
});

test.each([
  ['Example.COM.', 'example.com'],
  ['example.com', 'example.com'],
  ['example.com..', 'example.com.'],
  ['', ''],
])('lowerWithoutRootDot(%j) is %j (one root dot only; the rest is left to the checks)', (raw, expected) => {
  expect(lowerWithoutRootDot(raw)).toBe(expected);
});
