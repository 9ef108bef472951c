import { compareVersions, formatVersion, parseVersion, skippedLine, tryParseVersion } from '../../src/semver';

const v = parseVersion;

test('parses releases and release candidates, with or without the tag prefix', () => {
  expect(v('0.3.0')).toEqual({ major: 0, minor: 3, patch: 0, rc: undefined });
  expect(v('v1.2.3-rc.4')).toEqual({ major: 1, minor: 2, patch: 3, rc: 4 });
  expect(formatVersion(v('v1.2.3-rc.4'))).toBe('1.2.3-rc.4');
});

test('refuses other forms with the accepted ones named', () => {
  for (const bad of ['0.3', '0.3.0-rc1', '0.3.0-rc.0', '0.3.0-beta.1', '01.2.3', '0.2.1-e2e', '']) {
    expect(() => v(bad)).toThrow('use X.Y.Z for a release or X.Y.Z-rc.N');
    expect(tryParseVersion(bad)).toBeUndefined();
  }
});

test('orders by SemVer precedence: a release candidate before its release', () => {
  const sorted = ['0.10.0', '0.3.0', '0.3.0-rc.2', '0.3.0-rc.10', '0.3.1', '1.0.0-rc.1', '0.9.9'].map(v).sort(compareVersions).map(formatVersion);
  expect(sorted).toEqual(['0.3.0-rc.2', '0.3.0-rc.10', '0.3.0', '0.3.1', '0.9.9', '0.10.0', '1.0.0-rc.1']);
});

test('skippedLine names the minor line an upgrade would skip', () => {
  expect(skippedLine(v('0.2.3'), v('0.3.9'))).toBeUndefined();
  expect(skippedLine(v('0.2.3'), v('0.2.9'))).toBeUndefined();
  expect(skippedLine(v('0.2.0'), v('0.4.0'))).toBe('0.3');
  expect(skippedLine(v('0.2.0'), v('0.3.0-rc.1'))).toBeUndefined();
  expect(skippedLine(v('0.9.1'), v('1.0.0'))).toBeUndefined();
  expect(skippedLine(v('0.9.1'), v('1.1.0'))).toBe('1.0');
  expect(skippedLine(v('1.2.0'), v('3.0.0'))).toBe('2.0');
  expect(skippedLine(v('1.2.0'), v('1.1.0'))).toBeUndefined();
});
