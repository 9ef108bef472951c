import { httpURLProblem } from '../../../src/webhook/http-url';

const field = 'spec.model.externalAPI.baseURL';

describe('httpURLProblem', () => {
  it.each([
    'https://api.openai.com/v1',
    'http://llm.internal:8080',
    'HTTPS://Example.COM',
    'http://[::1]:8080/v1',
    'https://[2001:db8::1]/',
    'http://127.0.0.1:65535/path?q=1#frag',
  ])('accepts %s', (url) => {
    expect(httpURLProblem(url, field)).toBeUndefined();
  });

  it.each([
    ['https://api.openai.com/v1 ', 'contains whitespace; remove it'],
    ['https://api .openai.com', 'contains whitespace'],
    ['api.openai.com/v1', 'is not an absolute URL; write it as https://host[:port][/path]'],
    ['/v1/chat', 'is not an absolute URL'],
    ['ftp://files.example.com', 'uses the scheme "ftp"; use http or https'],
    ['https://user:pass@api.openai.com', 'contains a user name or password; remove it and put the credential in a Secret'],
    ['https://token@api.openai.com/v1', 'contains a user name or password'],
    ['https:///v1', 'has no host'],
    ['https://:8080/v1', 'has no host'],
    ['http://::1:8080/', 'IPv6 address without brackets'],
    ['http://[::1/', 'unclosed IPv6 bracket'],
    ['http://[::1]x/', 'text after the IPv6 address'],
    ['http://host:0/', 'has the port "0"; use a port from 1 to 65535'],
    ['http://host:65536/', 'has the port "65536"'],
    ['http://host:http/', 'has the port "http"'],
    ['http://exa mple/', 'contains whitespace'],
    ['http://exa%zzmple/', 'is not a valid URL'],
  ])('rejects %s', (url, message) => {
    const problem = httpURLProblem(url, field);
    expect(problem).toContain(`${field}: ${JSON.stringify(url)}`);
    expect(problem).toContain(message);
  });
});
