import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificateAuthority, issueServingCertificate } from '../../../src/webhook/certificates';
import { MountedCertificates, readMountedCertificate } from '../../../src/webhook/mounted-certificates';
import type { ServingCertificate } from '../../../src/webhook/server';

const ca = issueCertificateAuthority({ commonName: 'mounted-ca' });
const one = issueServingCertificate({ ca, dnsNames: ['a'] });
const two = issueServingCertificate({ ca, dnsNames: ['a'] });

// Lays files out the way the kubelet does: a timestamped directory behind the `..data` symlink.
function mount(directory: string, pair: { certPem: string; keyPem: string }, generation: number): void {
  const versioned = join(directory, `..${generation}`);
  mkdirSync(versioned);
  writeFileSync(join(versioned, 'tls.crt'), pair.certPem);
  writeFileSync(join(versioned, 'tls.key'), pair.keyPem);
  symlinkSync(`..${generation}`, join(directory, '..data_tmp'));
  renameSync(join(directory, '..data_tmp'), join(directory, '..data'));
  for (const file of ['tls.crt', 'tls.key']) {
    try {
      symlinkSync(join('..data', file), join(directory, file));
    } catch {
      // already linked through ..data
    }
  }
}

describe('mounted certificates (cert-manager mode)', () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'nls-certs-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('reads nothing while files are missing or do not belong together', async () => {
    expect(await readMountedCertificate(directory)).toBeUndefined();
    writeFileSync(join(directory, 'tls.crt'), one.certPem);
    writeFileSync(join(directory, 'tls.key'), two.keyPem);
    expect(await readMountedCertificate(directory)).toBeUndefined();
  });

  it('serves the mounted pair and reloads it when the kubelet swaps the Secret', async () => {
    const served: ServingCertificate[] = [];
    mount(directory, one, 1);
    const mounted = new MountedCertificates({ directory, serve: (c) => served.push(c), intervalMs: 20 });
    await mounted.start(2000);
    expect(served.map((c) => c.cert)).toEqual([one.certPem]);

    mount(directory, two, 2);
    const deadline = Date.now() + 3000;
    while (served.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    mounted.stop();
    expect(served.map((c) => c.cert)).toEqual([one.certPem, two.certPem]);
    expect(mounted.servedCertificate()).toBe(two.certPem);
  });

  it('gives up with a message naming the directory when nothing is mounted', async () => {
    const mounted = new MountedCertificates({ directory, serve: () => undefined });
    await expect(mounted.start(100)).rejects.toThrow(`no usable tls.crt/tls.key in ${directory}`);
  });
});
