// The SigV4 check the data-plane tests run on what reaches the Bedrock stand-in: it accepts the
// "get-vanilla" request of AWS's Signature Version 4 test suite and refuses it once anything signed
// changes, so a passing data-plane test means the gateway really signed what arrived.
import { sigV4Problem, type UpstreamRequest } from '../../e2e/support/providers';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const vanilla: UpstreamRequest = {
  method: 'GET', path: '/', host: 'example.amazonaws.com', stream: false, body: '',
  headers: {
    host: 'example.amazonaws.com',
    'x-amz-date': '20150830T123600Z',
    authorization: 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
};

test('AWS\'s get-vanilla example verifies', () => {
  expect(sigV4Problem(vanilla, credentials, 'service')).toBeUndefined();
});

test.each([
  ['another body', { body: '{}' }, /signature mismatch/],
  ['another path', { path: '/other' }, /signature mismatch/],
  ['another host header', { headers: { ...vanilla.headers, host: 'evil.example' } }, /signature mismatch/],
  ['another secret', {}, /signature mismatch/],
  ['no signature', { headers: { host: 'example.amazonaws.com' } }, /not a SigV4 Authorization header/],
] as const)('%s is refused', (what, change, message) => {
  const secret = what === 'another secret' ? { ...credentials, secretAccessKey: 'x' } : credentials;
  expect(sigV4Problem({ ...vanilla, ...change }, secret, 'service')).toMatch(message);
});

test('the wrong service or access key is named', () => {
  expect(sigV4Problem(vanilla, credentials, 'bedrock')).toBe('signed for service service, not bedrock');
  expect(sigV4Problem(vanilla, { ...credentials, accessKeyId: 'AKIAOTHER' }, 'service')).toBe('signed with access key AKIDEXAMPLE, not AKIAOTHER');
});
