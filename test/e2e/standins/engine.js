// Stand-in for the vLLM OpenAI server in the end-to-end suite's images (installed as `python3`,
// so the provider's default command `python3 -m vllm.entrypoints.openai.api_server` runs it).
// It takes vLLM's flags, refuses to start unless the model directory the download step filled
// exists, and answers the paths the gateway and agents use: /health, /v1/models and
// /v1/chat/completions. On /metrics (its serving port, as vLLM) it exports the vLLM V1 metric names
// and labels (`model_name`, `engine`) the serving-engine dashboard reads, from what it really
// served: requests in flight, the prompt and generated tokens it reported, and its time to first
// byte. What a stand-in has none of is constant: no queue (waiting 0), no KV cache (usage 0), no
// preemptions (0). It proves the PodMonitor, the scrape path and the dashboard's queries, not vLLM.
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

// vLLM's time-to-first-token buckets (seconds).
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const tally = { running: 0, promptTokens: 0, generationTokens: 0, ttft: { buckets: TTFT_BUCKETS.map(() => 0), sum: 0, count: 0 } };

function observeFirstByte(seconds) {
  TTFT_BUCKETS.forEach((le, i) => {
    if (seconds <= le) tally.ttft.buckets[i]++;
  });
  tally.ttft.sum += seconds;
  tally.ttft.count++;
}

/** The Prometheus text exposition of what this stand-in served. */
function metricsText() {
  const labels = `model_name="${served.replace(/["\\]/g, '\\$&')}",engine="0"`;
  const lines = [];
  const one = (name, type, help, value) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${labels}} ${value}`);
  one('vllm:num_requests_running', 'gauge', 'Requests in the running batch (stand-in: in flight).', tally.running);
  one('vllm:num_requests_waiting', 'gauge', 'Requests waiting (stand-in: no queue, always 0).', 0);
  one('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage (stand-in: no KV cache, always 0).', 0);
  one('vllm:num_preemptions_total', 'counter', 'Preemptions (stand-in: never, always 0).', 0);
  one('vllm:prompt_tokens_total', 'counter', 'Prompt tokens of the answered requests.', tally.promptTokens);
  one('vllm:generation_tokens_total', 'counter', 'Generated tokens of the answered requests.', tally.generationTokens);
  const ttft = 'vllm:time_to_first_token_seconds';
  lines.push(`# HELP ${ttft} Time to first byte of the answer.`, `# TYPE ${ttft} histogram`);
  TTFT_BUCKETS.forEach((le, i) => lines.push(`${ttft}_bucket{${labels},le="${le}"} ${tally.ttft.buckets[i]}`));
  lines.push(`${ttft}_bucket{${labels},le="+Inf"} ${tally.ttft.count}`, `${ttft}_sum{${labels}} ${tally.ttft.sum}`, `${ttft}_count{${labels}} ${tally.ttft.count}`);
  return `${lines.join('\n')}\n`;
}

const send = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
http
  .createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') return send(res, 200, {});
    if (req.method === 'GET' && req.url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      return res.end(metricsText());
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      return send(res, 200, { object: 'list', data: [{ id: served, object: 'model', created: 0, owned_by: 'e2e-standin' }] });
    }
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      const arrived = process.hrtime.bigint();
      tally.running++;
      res.on('close', () => tally.running--);
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
        const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
        tally.promptTokens += usage.prompt_tokens;
        tally.generationTokens += usage.completion_tokens;
        observeFirstByte(Number(process.hrtime.bigint() - arrived) / 1e9);
        return send(res, 200, {
          id: 'chatcmpl-e2e',
          object: 'chat.completion',
          created: 0,
          model: served,
          choices: [{ index: 0, message: { role: 'assistant', content: `echo: ${last.content}` }, finish_reason: 'stop' }],
          usage,
        });
      });
      return;
    }
    send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
  })
  .listen(port, '0.0.0.0');
process.on('SIGTERM', () => process.exit(0));
