// Stand-in for the vLLM OpenAI server in the end-to-end suite's images (installed as `python3`,
// so the provider's default command `python3 -m vllm.entrypoints.openai.api_server` runs it).
// It takes vLLM's flags, refuses to start unless the model directory the download step filled
// exists, and answers the paths the gateway and agents use: /health, /v1/models and
// /v1/chat/completions.
const fs = require('fs');
const http = require('http');
const path = require('path');

const flags = Object.fromEntries(
  process.argv.slice(2).filter((a) => a.startsWith('--')).map((a) => {
    const [key, ...rest] = a.slice(2).split('=');
    return [key, rest.join('=')];
  }),
);
const modelDir = flags.model;
const served = flags['served-model-name'] || modelDir;
const port = Number(flags.port || 8000);
const marker = modelDir && path.join(modelDir, 'config.json');
if (!marker || !fs.existsSync(marker)) {
  console.error(`engine: no model files at ${modelDir} (config.json missing); the download step did not run`);
  process.exit(1);
}
console.log(`engine: serving ${served} from ${modelDir} on :${port} (${JSON.stringify(flags)})`);

const send = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
http
  .createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') return send(res, 200, {});
    if (req.method === 'GET' && req.url === '/v1/models') {
      return send(res, 200, { object: 'list', data: [{ id: served, object: 'model', created: 0, owned_by: 'e2e-standin' }] });
    }
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        let body;
        try {
          body = JSON.parse(raw);
        } catch {
          return send(res, 400, { error: { message: 'body is not JSON' } });
        }
        if (body.model !== served) return send(res, 404, { error: { message: `model ${body.model} is not served here; ${served} is` } });
        const last = (body.messages || []).slice(-1)[0] || { content: '' };
        return send(res, 200, {
          id: 'chatcmpl-e2e',
          object: 'chat.completion',
          created: 0,
          model: served,
          choices: [{ index: 0, message: { role: 'assistant', content: `echo: ${last.content}` }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      });
      return;
    }
    send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
  })
  .listen(port, '0.0.0.0');
process.on('SIGTERM', () => process.exit(0));
