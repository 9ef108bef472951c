// Stand-in for the Gateway API Inference Extension endpoint picker, strict where EPP v1.0.2 is:
// it exits without a readable --config-file (or --config-text); with the pod's own ServiceAccount
// token it reads its InferencePool, lists the pool's pods and the InferenceObjectives it watches
// (so the Role the operator created for it is proven), then listens on the gRPC port and answers
// the gRPC health check on --grpc-health-port (the pod's probes). A failed read exits, which
// shows as a crash-looping pod.
const fs = require('fs');
const http2 = require('http2');
const https = require('https');
const net = require('net');

const flags = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
const token = fs.readFileSync(`${sa}/token`, 'utf8');
const ca = fs.readFileSync(`${sa}/ca.crt`);
const host = process.env.KUBERNETES_SERVICE_HOST;
const port = process.env.KUBERNETES_SERVICE_PORT;

function get(path) {
  return new Promise((resolve, reject) => {
    https
      .get({ host, port, path, ca, headers: { authorization: `Bearer ${token}` } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`GET ${path}: ${res.statusCode} ${body}`))));
      })
      .on('error', reject);
  });
}

/** grpc.health.v1.Health/Check answered SERVING (HealthCheckResponse{status: 1}), over h2c as kubelet asks. */
function serveHealth(port) {
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    if (headers[':path'] !== '/grpc.health.v1.Health/Check') {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true });
      return;
    }
    stream.on('data', () => {});
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]));
    });
  });
  server.listen(port, '0.0.0.0');
}

function readConfig() {
  if (flags['config-text'] && flags['config-file']) throw new Error('both the "configText" and "configFile" flags can not be set at the same time');
  if (flags['config-text']) return flags['config-text'];
  // What EPP v1.0.2 says without either flag (it then exits).
  if (!flags['config-file']) throw new Error('failed to create scheduler {"error": "scheduler config must be set either by config api or through code"}');
  return fs.readFileSync(flags['config-file'], 'utf8');
}

async function look() {
  const ns = flags['pool-namespace'];
  const pool = await get(`/apis/inference.networking.k8s.io/v1/namespaces/${ns}/inferencepools/${flags['pool-name']}`);
  const selector = Object.entries(pool.spec.selector.matchLabels).map(([k, v]) => `${k}=${v}`).join(',');
  const pods = await get(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`);
  const objectives = await get(`/apis/inference.networking.x-k8s.io/v1alpha2/namespaces/${ns}/inferenceobjectives`);
  console.log(`epp: pool ${ns}/${flags['pool-name']} selects ${pods.items.length} pod(s): ${pods.items.map((p) => p.metadata.name).join(', ')}; ${objectives.items.length} InferenceObjective(s)`);
}

Promise.resolve()
  .then(() => console.log(`epp: configuration of ${readConfig().length} bytes`))
  .then(look)
  .then(
    () => {
      net.createServer((socket) => socket.end()).listen(Number(flags['grpc-port'] || 9002), '0.0.0.0');
      serveHealth(Number(flags['grpc-health-port'] || 9003));
      setInterval(() => look().catch((err) => console.error(`epp: ${err.message}`)), 10000);
    },
    (err) => {
      console.error(`epp: ${err.message}`);
      process.exit(1);
    },
  );
process.on('SIGTERM', () => process.exit(0));
