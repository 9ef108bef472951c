// The benchmarks' stand-in provider, run as its own process (forked by data-plane.ts) so its
// CPU is not the client's: HTTPS on the node address, answering every chat completion at once
// with one token each way, whatever model it names. A streamed request gets its first chunk at
// once and the rest 20 ms later, so time to first byte is what a stream measures.
import * as https from 'node:https';
import { NODE_ADDRESS } from '../../support/node';

process.once('message', (m: { cert: string; key: string }) => {
  const completion = (model: string) => JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
  const chunk = (model: string, content: string) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  const server = https.createServer({ cert: m.cert, key: m.key, keepAliveTimeout: 60000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const model = /"model":"([^"]*)"/.exec(body)?.[1] ?? 'unknown';
      if (body.includes('"stream":true')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk(model, 'po'));
        setTimeout(() => res.end(chunk(model, 'ng') + 'data: [DONE]\n\n'), 20);
        return;
      }
      const answer = completion(model);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  server.listen(443, NODE_ADDRESS, () => process.send!({ ready: true }));
});
