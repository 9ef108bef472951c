// Starts the test OpenID Provider (test/support/oidc-test-provider.mjs) as its own Node process
// and waits for the issuer URL it prints. Shared by the key portal's integration test and the
// end-to-end suite, which serves it on the node address over TLS.
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';

export interface TestIssuerOptions {
  /** The JSON accounts file the provider reads on every lookup (the test rewrites it). */
  accountsFile: string;
  redirectUri: string;
  clientId: string;
  clientSecret: string;
  /** Listen address. @default 127.0.0.1 */
  host?: string;
  /** Serve https with this certificate and key (PEM files). */
  tls?: { certFile: string; keyFile: string };
}

export interface TestIssuer {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

const PROVIDER = path.resolve(__dirname, 'oidc-test-provider.mjs');

export async function startTestIssuer(opts: TestIssuerOptions): Promise<TestIssuer> {
  const child = spawn(process.execPath, [PROVIDER], {
    env: {
      PATH: process.env.PATH ?? '',
      ACCOUNTS_FILE: opts.accountsFile,
      REDIRECT_URI: opts.redirectUri,
      CLIENT_ID: opts.clientId,
      CLIENT_SECRET: opts.clientSecret,
      ...(opts.host ? { HOST: opts.host } : {}),
      ...(opts.tls ? { TLS_CERT_FILE: opts.tls.certFile, TLS_KEY_FILE: opts.tls.keyFile } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the test OpenID Provider did not start within 30 s:\n${output}`)), 30_000);
      child.stdout!.on('data', () => {
        const line = output.split('\n').find((l) => l.includes('"issuer"'));
        if (!line) return;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { issuer: string }).issuer);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the test OpenID Provider exited (${code}):\n${output}`));
      });
    });
    return { url, child, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
