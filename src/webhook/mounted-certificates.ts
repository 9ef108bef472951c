// cert-manager mode: cert-manager writes the serving certificate into a Secret that the kubelet
// mounts at NLS_CERT_DIR, and its CA injector fills our configurations' caBundle. We only serve
// the files and notice when they change. The kubelet replaces mounted Secrets by swapping a
// symlink, which file watchers miss on some filesystems, so the files are polled by content.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keyMatchesCertificate } from './certificates';
import { type Logger, silentLogger } from './log';
import type { ServingCertificate } from './server';

export interface MountedCertificatesOptions {
  /** Directory holding tls.crt and tls.key (and usually ca.crt). */
  readonly directory: string;
  /** Called with each new, consistent pair of files. */
  readonly serve: (certificate: ServingCertificate) => void;
  /** @default 5 s */
  readonly intervalMs?: number;
  readonly log?: Logger;
}

/** Reads tls.crt/tls.key; undefined while they are missing or do not belong together (mid-update). */
export async function readMountedCertificate(directory: string): Promise<ServingCertificate | undefined> {
  try {
    const [cert, key] = await Promise.all([readFile(join(directory, 'tls.crt'), 'utf8'), readFile(join(directory, 'tls.key'), 'utf8')]);
    return keyMatchesCertificate(cert, key) ? { cert, key } : undefined;
  } catch {
    return undefined;
  }
}

/** The issuing CA cert-manager puts beside the certificate (ca.crt); undefined when absent. */
export async function readMountedCa(directory: string): Promise<string | undefined> {
  try {
    const ca = await readFile(join(directory, 'ca.crt'), 'utf8');
    return ca.includes('BEGIN CERTIFICATE') ? ca : undefined;
  } catch {
    return undefined;
  }
}

export class MountedCertificates {
  private served = '';
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly log: Logger;

  constructor(private readonly options: MountedCertificatesOptions) {
    this.log = options.log ?? silentLogger;
  }

  /** Waits until the files hold a usable pair (bounded by `timeoutMs`), serves it, then polls. */
  async start(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.check())) {
      if (this.stopped) throw new Error('stopped before a certificate was available');
      if (Date.now() > deadline) {
        throw new Error(`no usable tls.crt/tls.key in ${this.options.directory} after ${timeoutMs} ms; is the cert-manager Certificate issued and its Secret mounted?`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Loads the files if they changed; true when a certificate is being served. */
  async check(): Promise<boolean> {
    const current = await readMountedCertificate(this.options.directory);
    if (current && current.cert !== this.served) {
      this.options.serve(current);
      if (this.served) this.log.info('reloaded webhook serving certificate', { directory: this.options.directory });
      this.served = current.cert;
    }
    return this.served !== '';
  }

  servedCertificate(): string {
    return this.served;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.check()
        .catch((error: unknown) => this.log.warn('reading mounted certificates failed', { error: String(error) }))
        .finally(() => this.schedule());
    }, this.options.intervalMs ?? 5000);
    this.timer.unref();
  }
}
