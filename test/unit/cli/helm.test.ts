import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Helm, HelmError, findHelm } from '../../../src/cli/lifecycle/helm';

describe('findHelm', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-helm-'));
  const fake = path.join(dir, 'helm');
  fs.writeFileSync(fake, '#!/bin/sh\necho "v4.1.4+gabc"\n', { mode: 0o755 });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('NLS_HELM wins over PATH', () => {
    expect(findHelm({ NLS_HELM: fake, PATH: '/nonexistent' })).toBe(fake);
  });

  test('otherwise the first executable helm on PATH', () => {
    expect(findHelm({ PATH: ['/nonexistent', dir].join(path.delimiter) })).toBe(fake);
  });

  test('says how to fix a missing helm', () => {
    expect(() => findHelm({ PATH: '/nonexistent' })).toThrow('helm was not found on PATH; install helm 3.17+ (or 4) or set NLS_HELM to its path');
    expect(() => findHelm({ NLS_HELM: '/no/helm' })).toThrow('NLS_HELM is "/no/helm", which does not exist');
  });

  test('reads the major version and quotes helm on failure', async () => {
    const helm = new Helm({ binary: fake });
    expect(await helm.majorVersion()).toBe(4);
    const failing = path.join(dir, 'failing-helm');
    fs.writeFileSync(failing, '#!/bin/sh\necho "Error: release: not found" >&2\nexit 1\n', { mode: 0o755 });
    const error = await new Helm({ binary: failing }).ok(['status', 'x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HelmError);
    expect((error as Error).message).toBe('helm status x failed (exit 1): Error: release: not found');
  });
});
