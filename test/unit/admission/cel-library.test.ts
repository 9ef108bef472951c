// The Kubernetes CEL library functions added to @bufbuild/cel, and the CEL value conversion.
import { isCelError } from '@bufbuild/cel';
import { celOptional } from '../../../src/admission/cel-library';
import { celProgram, celValue } from '../../../src/admission/cel-rules';
import { parseRequestUri } from '../../../src/admission/request-uri';

const run = (expression: string, self: unknown, oldSelf: unknown = null) => {
  const result = celProgram(expression)({ self: self as never, oldSelf: oldSelf as never });
  return isCelError(result) ? `error: ${result.message}` : result;
};

describe('isURL and url() (Go url.ParseRequestURI)', () => {
  test.each([
    ['https://api.openai.com/v1', true],
    ['http://collector.example.com:4318/v1/traces', true],
    ['collector:4317', true], // scheme "collector", opaque "4317": parses, but has no host
    ['/just/a/path', true],
    ['api.openai.com/v1', false],
    ['', false],
    [':4317', false],
    ['https://exa mple.com', false],
    ['https://example.com/a\nb', false],
    ['https://example.com:port/', false],
  ])('isURL(%j) is %s', (text, expected) => {
    expect(run('isURL(self)', text)).toBe(expected);
  });

  test('getScheme is lower-cased as Go does, getHostname drops the port and IPv6 brackets', () => {
    expect(run('url(self).getScheme()', 'HTTPS://Example.com:8443/x')).toBe('https');
    expect(run('url(self).getHostname()', 'HTTPS://Example.com:8443/x')).toBe('Example.com');
    expect(run('url(self).getHostname()', 'http://[::1]:80/')).toBe('::1');
    expect(run('url(self).getHostname()', 'collector:4317')).toBe('');
    expect(parseRequestUri('https://user:pw@host.example/')).toMatchObject({ hostname: 'host.example' });
  });

  test('url() of text that is not a URL is an evaluation error, as in Kubernetes', () => {
    expect(run('url(self).getScheme()', 'no url here')).toMatch(/^error: URL parse error/);
  });
});

describe('optional oldSelf', () => {
  test('hasValue() is false on CREATE and true on UPDATE; value() reads the old value', () => {
    expect(run('oldSelf.hasValue()', 'x', celOptional(undefined))).toBe(false);
    expect(run('oldSelf.hasValue() && oldSelf.value() == "a"', 'x', celOptional('a'))).toBe(true);
  });
});

describe('strings and regular expressions (RE2 like the API server)', () => {
  test('lowerAscii, replace (every occurrence), matches finding a match anywhere', () => {
    expect(run("self.lowerAscii()", 'Api.OpenAI.COM')).toBe('api.openai.com');
    expect(run("self.replace('.', '-')", 'llama-3.1.8b')).toBe('llama-3-1-8b');
    expect(run("self.matches('^\\\\s|\\\\s$')", 'gpt-4.1 ')).toBe(true);
    expect(run("self.matches('[\\\\x00-\\\\x1f\\\\x7f]')", 'a\tb')).toBe(true);
    expect(run("self.matches('[\\\\x00-\\\\x1f\\\\x7f]')", 'plain')).toBe(false);
  });
});

describe('celValue', () => {
  test('integer fields and int-or-string integers become CEL ints, number fields doubles', () => {
    const schema = {
      type: 'object',
      properties: { count: { type: 'integer' }, ratio: { type: 'number' }, size: { 'x-kubernetes-int-or-string': true } },
    };
    const value = celValue(schema, { count: 2, ratio: 2, size: 5 }) as Map<string, unknown>;
    expect(value.get('count')).toBe(2n);
    expect(value.get('ratio')).toBe(2);
    expect(value.get('size')).toBe(5n);
    expect(run('string(self.size) == "5" && self.count == 2', value)).toBe(true);
  });

  test('the root metadata carries only name and generateName', () => {
    const root = celValue({ type: 'object', properties: { metadata: { type: 'object' } } }, { metadata: { name: 'a', labels: { x: 'y' } } }, true) as Map<string, Map<string, unknown>>;
    expect([...root.get('metadata')!.keys()]).toEqual(['name']);
  });
});
