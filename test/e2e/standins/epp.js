// Stand-in for the Gateway API Inference Extension endpoint picker: with the pod's own
// ServiceAccount token it reads its InferencePool and lists the pool's pods (so the Role the
// operator created for it is proven), then listens on the gRPC port. A failed read exits, which
// shows as a crash-looping pod.
const fs = require('fs');
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

async function look() {
  const ns = flags['pool-namespace'];
  const pool = await get(`/apis/inference.networking.k8s.io/v1/namespaces/${ns}/inferencepools/${flags['pool-name']}`);
  const selector = Object.entries(pool.spec.selector.matchLabels).map(([k, v]) => `${k}=${v}`).join(',');
  const pods = await get(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`);
  console.log(`epp: pool ${ns}/${flags['pool-name']} selects ${pods.items.length} pod(s): ${pods.items.map((p) => p.metadata.name).join(', ')}`);
}

look().then(
  () => {
    net.createServer((socket) => socket.end()).listen(Number(flags['grpc-port'] || 9002), '0.0.0.0');
    setInterval(() => look().catch((err) => console.error(`epp: ${err.message}`)), 10000);
  },
  (err) => {
    console.error(`epp: ${err.message}`);
    process.exit(1);
  },
);
process.on('SIGTERM', () => process.exit(0));
