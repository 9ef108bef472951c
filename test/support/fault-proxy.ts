// A loopback TCP proxy between a client under test and the real kube-apiserver, which a test
// breaks on purpose: freeze the open connections (the sockets stay open but no byte passes, as
// with a peer that vanished behind a proxy: a half-open connection), refuse new connections, reset
// them, or answer every request with 503. It terminates TLS with its own certificate for
// 127.0.0.1 and opens its own TLS connection to the API server, so it handles plain bytes and can
// write an HTTP answer itself; it never parses or alters what it forwards (the client's bearer
// token passes through).
import * as k8s from '@kubernetes/client-node';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { issueCertificateAuthority, issueServingCertificate } from '../../src/webhook/certificates';

/** What happens to new connections. */
export type ProxyMode = 'forward' | 'refuse' | 'reset' | 'unavailable';

export interface FaultProxy {
  readonly port: number;
  /** The upstream KubeConfig with this proxy as its server (same user and token). */
  kubeConfig(): k8s.KubeConfig;
  /**
   * `forward` passes bytes; `refuse` closes the listening socket (ECONNREFUSED); `reset` accepts
   * and resets at once (ECONNRESET); `unavailable` answers each request 503. Every mode but
   * `forward` first drops the open connections, as a failing server would.
   */
  setMode(mode: ProxyMode): Promise<void>;
  /** Stops forwarding on every open connection without closing it; new connections still work. */
  freeze(): void;
  /** Connections accepted, 503 answers written, connections reset, and the open connections frozen. */
  readonly counts: { connections: number; unavailable: number; resets: number; frozen: number };
  close(): Promise<void>;
}

interface Link {
  client: net.Socket;
  upstream?: net.Socket;
  frozen: boolean;
}

const unavailableBody = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'fault proxy: the API server is unavailable',
  reason: 'ServiceUnavailable',
  code: 503,
});
const unavailableAnswer =
  'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n' +
  `content-length: ${Buffer.byteLength(unavailableBody)}\r\n\r\n${unavailableBody}`;

export async function startFaultProxy(upstream: k8s.KubeConfig): Promise<FaultProxy> {
  const cluster = upstream.getCurrentCluster();
  if (!cluster?.caData) throw new Error('the upstream kubeconfig needs a cluster with certificate-authority-data');
  const target = new URL(cluster.server);
  const upstreamCa = Buffer.from(cluster.caData, 'base64');
  const ca = issueCertificateAuthority({ commonName: 'fault-proxy' });
  const serving = issueServingCertificate({ ca, dnsNames: [], ipAddresses: ['127.0.0.1'] });
  const links = new Set<Link>();
  // Frozen links stay open until the proxy closes, forwarding nothing.
  const frozenLinks: Link[] = [];
  const counts = { connections: 0, unavailable: 0, resets: 0, frozen: 0 };
  let mode: ProxyMode = 'forward';

  const dropLink = (link: Link) => {
    links.delete(link);
    link.client.destroy();
    link.upstream?.destroy();
  };

  const onSecureConnection = (client: tls.TLSSocket) => {
    client.on('error', () => undefined);
    if (mode === 'unavailable') {
      client.once('data', () => {
        counts.unavailable++;
        client.end(unavailableAnswer);
      });
      return;
    }
    const link: Link = { client, frozen: false };
    links.add(link);
    const up = tls.connect({ host: target.hostname, port: Number(target.port), ca: upstreamCa });
    link.upstream = up;
    up.on('error', () => undefined);
    // A frozen link drops what arrives and never closes the other side: nobody learns anything.
    client.on('data', (chunk: Buffer) => {
      if (!link.frozen) up.write(chunk);
    });
    up.on('data', (chunk: Buffer) => {
      if (!link.frozen) client.write(chunk);
    });
    const closed = () => {
      if (!link.frozen) dropLink(link);
    };
    client.on('close', closed);
    up.on('close', closed);
  };

  // The TCP socket, before TLS: `reset` answers here with an RST.
  const onConnection = (socket: net.Socket) => {
    counts.connections++;
    if (mode === 'reset') {
      counts.resets++;
      socket.resetAndDestroy();
    }
  };

  let server: tls.Server;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = tls.createServer({ cert: serving.certPem, key: serving.keyPem }, onSecureConnection);
      server.on('connection', onConnection);
      server.on('tlsClientError', () => undefined);
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
    });
  const port = await listen(0);

  return {
    port,
    counts,
    kubeConfig() {
      const kc = new k8s.KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fault-proxy', server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca.certPem).toString('base64'), skipTLSVerify: false }],
        users: [upstream.getCurrentUser()!],
        contexts: [{ name: 'fault-proxy', cluster: 'fault-proxy', user: upstream.getCurrentUser()!.name }],
        currentContext: 'fault-proxy',
      });
      return kc;
    },
    async setMode(next) {
      if (next !== 'forward') for (const link of [...links]) dropLink(link);
      if (next === 'refuse' && mode !== 'refuse') server.close();
      if (next !== 'refuse' && mode === 'refuse') await listen(port);
      mode = next;
    },
    freeze() {
      for (const link of links) {
        link.frozen = true;
        frozenLinks.push(link);
        counts.frozen++;
      }
      links.clear();
    },
    async close() {
      for (const link of [...links, ...frozenLinks]) {
        link.client.destroy();
        link.upstream?.destroy();
      }
      if (mode !== 'refuse') await new Promise((resolve) => server.close(resolve));
    },
  };
}
