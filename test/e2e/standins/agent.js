// Stand-in agent: serves /healthz and /env (the names of the model variables it received and
// whether each is set), so the suite can check what the operator injected.
const http = require('http');

const port = Number((process.argv.find((a) => a.startsWith('--listen=')) || '--listen=:8080').split(':').pop());
const names = Object.keys(process.env).filter((k) => /^(OPENAI|ANTHROPIC|AZURE_OPENAI|OTEL|AGENT)_/.test(k)).sort();
console.log(`agent: model environment ${names.join(', ')}`);
http
  .createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url === '/env' ? JSON.stringify(Object.fromEntries(names.map((n) => [n, n.endsWith('_KEY') ? '<set>' : process.env[n]]))) : '{}');
  })
  .listen(port, '0.0.0.0');
process.on('SIGTERM', () => process.exit(0));
