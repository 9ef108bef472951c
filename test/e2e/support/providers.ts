// Stand-in model providers for the data-plane tests: one HTTPS server on the node address with a
// certificate (from the suite's CA) for every stand-in host name, answering as OpenAI (chat
// completions, streamed or not, and the model list), Azure OpenAI (deployment paths with
// `api-version`) and Anthropic (`/v1/messages`) do. It records what reaches it, so tests assert
// on what the gateway sent upstream, not on what it answered.
import * as https from 'https';
import { issueServingCertificate, type KeyPair } from '../../../src/webhook/certificates';
import { NODE_ADDRESS } from '../../support/node';

export interface UpstreamRequest {
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly headers: Record<string, string>;
  /** The `model` field of the JSON body, if any. */
  readonly model?: string;
  readonly stream: boolean;
}

export interface StandInProviders {
  readonly requests: UpstreamRequest[];
  /** Requests whose `model` is `model`, in arrival order. */
  to(model: string): UpstreamRequest[];
  stop(): Promise<void>;
}

function openAiCompletion(model: string): object {
  return {
    id: 'chatcmpl-standin', object: 'chat.completion', created: 1767225600, model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

/** The chunks of a streamed answer: three content pieces, then `[DONE]`. */
export const STREAM_PIECES = ['po', 'n', 'g'];

function streamChunks(model: string): string {
  const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-standin', object: 'chat.completion.chunk', created: 1767225600, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return chunk({ role: 'assistant', content: '' }, null) + STREAM_PIECES.map((p) => chunk({ content: p }, null)).join('') + chunk({}, 'stop') + 'data: [DONE]\n\n';
}

export async function startStandInProviders(ca: KeyPair, hostnames: string[], port = 443): Promise<StandInProviders> {
  const serving = issueServingCertificate({ ca, dnsNames: hostnames });
  const requests: UpstreamRequest[] = [];
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { model?: string; stream?: boolean } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as typeof body;
      } catch {
        // not JSON: recorded without a model
      }
      const url = req.url ?? '/';
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]));
      // Azure names the deployment in the path; the body may omit the model.
      const azure = /^\/openai\/deployments\/([^/]+)\//.exec(url);
      const model = body.model ?? azure?.[1];
      requests.push({ method: req.method ?? '', path: url, host: headers.host ?? '', headers, model, stream: !!body.stream });
      const json = (status: number, payload: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.method === 'GET' && url.endsWith('/models')) return json(200, { object: 'list', data: [] });
      if (url.startsWith('/v1/messages')) {
        return json(200, { id: 'msg_standin', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'pong' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } });
      }
      if (url.includes('/chat/completions')) {
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return res.end(streamChunks(model ?? ''));
        }
        return json(200, openAiCompletion(model ?? ''));
      }
      json(404, { error: { message: `stand-in provider: no handler for ${req.method} ${url}` } });
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, NODE_ADDRESS, () => resolve()));
  return {
    requests,
    to: (model) => requests.filter((r) => r.model === model),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
