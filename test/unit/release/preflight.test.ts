import { parseVersion } from '../../../src/semver';
import { requireNewer } from '../../../scripts/release/preflight';

const tags = (...t: string[]) => t.map((x) => parseVersion(x));

test('a new minor release or RC must be newer than every release tag', () => {
  expect(requireNewer(parseVersion('0.4.0-rc.1'), tags('0.2.0', '0.3.0', '0.3.1'))).toEqual(parseVersion('0.3.1'));
  expect(requireNewer(parseVersion('0.4.0'), tags('0.3.0', '0.4.0-rc.2', '0.4.0'))).toEqual(parseVersion('0.4.0-rc.2'));
  expect(() => requireNewer(parseVersion('0.4.0-rc.1'), tags('0.4.0-rc.2'))).toThrow('0.4.0-rc.1 is not newer than the last release tag v0.4.0-rc.2');
  expect(() => requireNewer(parseVersion('0.3.0'), tags('0.4.0'))).toThrow('is not newer than the last release tag v0.4.0');
  expect(requireNewer(parseVersion('0.1.0'), [])).toBeUndefined();
});

test('a patch is judged within its own line, which must have its .0 release', () => {
  expect(requireNewer(parseVersion('0.3.2'), tags('0.3.0', '0.3.1', '0.4.0'))).toEqual(parseVersion('0.3.1'));
  expect(() => requireNewer(parseVersion('0.3.1'), tags('0.3.0', '0.3.1', '0.4.0'))).not.toThrow();
  expect(() => requireNewer(parseVersion('0.3.1'), tags('0.3.0', '0.3.2'))).toThrow('of the 0.3 line');
  expect(() => requireNewer(parseVersion('0.5.1'), tags('0.4.0', '0.5.0-rc.1'))).toThrow('0.5.0 was never released');
});
