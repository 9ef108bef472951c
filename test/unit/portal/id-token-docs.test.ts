// What the docs say the portal checks of an ID token is what src/portal/oidc.ts checks (issue 29,
// Low: the docs claimed a signature check that openid-client 6 does not make unless asked).
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

test('the key portal docs claim an ID-token signature check exactly when the code enables it', () => {
  const checksSignature = /enableNonRepudiationChecks/.test(read('src/portal/oidc.ts'));
  const loginDoc = /\*\*Login\*\*:[\s\S]*?(?=\n- \*\*)/.exec(read('docs/key-portal.md'))![0];
  const claimsSignature = /validates the ID token \([^)]*signature/.test(loginDoc);
  expect(claimsSignature).toBe(checksSignature);
  if (!checksSignature) expect(loginDoc).toContain('**not its signature**');
});
