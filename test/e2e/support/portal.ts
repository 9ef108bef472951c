// What the key portal needs around it on the real node, and nothing the product ships:
// - a real OpenID Provider (test/support/oidc-test-provider.mjs, panva's oidc-provider) on the
//   node address over TLS, with a CA made here that the chart is given through
//   portal.oidc.caConfigMap, so the portal pod reaches it exactly as it would reach a real issuer;
// - a TLS front on 127.0.0.1:443 of the run's network namespace for the portal's Service,
//   standing in for the Gateway's TLS listener (no Envoy runs in the suite); Chromium reaches it
//   under the portal's host name through a host-resolver rule, so the page is https://<hostname>
//   as in production;
// - Debian's headless Chromium driven by puppeteer-core.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as tls from 'node:tls';
import puppeteer, { Browser, Page } from 'puppeteer-core';
import { issueCertificateAuthority, issueServingCertificate, KeyPair } from '../../../src/webhook/certificates';
import { NODE_ADDRESS } from '../../support/node';
import { startTestIssuer } from '../../support/test-issuer';
import { repoRoot } from '../../support/tools';

export const CHROMIUM = '/usr/lib/chromium/chromium-headless-shell';

export type Accounts = Record<string, { username: string; groups: string[] }>;

export interface Issuer {
  readonly url: string;
  readonly ca: KeyPair;
  setAccounts(accounts: Accounts): void;
  stop(): Promise<void>;
}

/** Starts the test OpenID Provider on the node address, https, with a fresh CA. */
export async function startIssuer(dir: string, opts: { redirectUri: string; clientId: string; clientSecret: string; accounts: Accounts }): Promise<Issuer> {
  fs.mkdirSync(dir, { recursive: true });
  const ca = issueCertificateAuthority({ commonName: 'e2e issuer CA' });
  const serving = issueServingCertificate({ ca, dnsNames: [], ipAddresses: [NODE_ADDRESS] });
  const files = { cert: path.join(dir, 'tls.crt'), key: path.join(dir, 'tls.key'), accounts: path.join(dir, 'accounts.json') };
  fs.writeFileSync(files.cert, serving.certPem);
  fs.writeFileSync(files.key, serving.keyPem, { mode: 0o600 });
  const setAccounts = (accounts: Accounts) => {
    fs.writeFileSync(files.accounts + '.tmp', JSON.stringify(accounts));
    fs.renameSync(files.accounts + '.tmp', files.accounts);
  };
  setAccounts(opts.accounts);
  const issuer = await startTestIssuer({
    accountsFile: files.accounts,
    redirectUri: opts.redirectUri,
    clientId: opts.clientId,
    clientSecret: opts.clientSecret,
    host: NODE_ADDRESS,
    tls: { certFile: files.cert, keyFile: files.key },
  });
  return { url: issuer.url, ca, setAccounts, stop: issuer.stop };
}

/** TLS on 127.0.0.1:443 for `hostname`, forwarding each connection to `target` as plain TCP. */
export async function startTlsFront(ca: KeyPair, hostname: string, target: { host: string; port: number }): Promise<{ stop(): Promise<void> }> {
  const serving = issueServingCertificate({ ca, dnsNames: [hostname] });
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ cert: serving.certPem, key: serving.keyPem }, (client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.pipe(upstream).pipe(client);
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(443, '127.0.0.1', () => resolve()));
  return {
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Headless Chromium that resolves `hostname` to the TLS front and accepts the suite's certificates. */
export async function launchBrowser(hostname: string): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing; run bash scripts/install-browser.sh (npm run tools does)`);
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: 'shell',
    acceptInsecureCerts: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', `--host-resolver-rules=MAP ${hostname} 127.0.0.1`],
  });
}

/** Logs `account` in through the provider's login form in a fresh context; returns the page on the portal's home. */
export async function logIn(browser: Browser, portalUrl: string, account: string): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1000, height: 800 });
  await page.goto(`${portalUrl}/`, { waitUntil: 'load' });
  await page.waitForSelector('input[name=login]');
  await page.type('input[name=login]', account);
  await page.type('input[name=password]', 'any');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('button[type=submit]')]);
  // oidc-provider's development consent screen, when it asks.
  if (!page.url().startsWith(portalUrl)) await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('button[type=submit]')]);
  if (page.url() !== `${portalUrl}/`) throw new Error(`login of ${account} ended at ${page.url()}: ${await page.$eval('body', (b) => b.textContent ?? '')}`);
  return page;
}

export const ARTIFACTS = path.join(repoRoot, 'test-artifacts', 'portal-e2e');
