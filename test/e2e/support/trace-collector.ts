// A stand-in OpenTelemetry collector for the gateway's spans: an OTLP/gRPC trace receiver (HTTP/2
// without TLS, the way Envoy Gateway's tracing cluster talks) on the node address. It decodes just
// enough of each ExportTraceServiceRequest to keep every span's name and string attributes, and
// answers every export with success, so tests assert on the spans Envoy really sent.
import * as http2 from 'http2';
import type { AddressInfo } from 'net';

export interface ReceivedSpan {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export interface TraceCollector {
  readonly address: string;
  readonly port: number;
  readonly spans: ReceivedSpan[];
  /** Exports received, whatever they held. */
  exports(): number;
  stop(): Promise<void>;
}

const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** The length-delimited and varint fields of a protobuf message, in order (other wire types skipped). */
function fields(buf: Buffer): { field: number; bytes?: Buffer; varint?: number }[] {
  const out: { field: number; bytes?: Buffer; varint?: number }[] = [];
  let i = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = buf[i++];
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) out.push({ field, varint: varint() });
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const len = varint();
      out.push({ field, bytes: buf.subarray(i, i + len) });
      i += len;
    } else throw new Error(`protobuf wire type ${wire} is not expected in an OTLP trace export`);
  }
  return out;
}

const sub = (buf: Buffer, field: number) => fields(buf).filter((f) => f.field === field && f.bytes).map((f) => f.bytes as Buffer);

/** Field numbers of opentelemetry/proto/trace/v1 and common/v1 (OTLP 1.x). */
function decodeSpans(request: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of sub(request, 1)) {
    for (const scopeSpans of sub(resourceSpans, 2)) {
      for (const span of sub(scopeSpans, 2)) {
        const attributes: Record<string, string> = {};
        for (const kv of sub(span, 9)) {
          const key = sub(kv, 1)[0]?.toString('utf8');
          const value = sub(kv, 2)[0];
          const text = value ? sub(value, 1)[0] : undefined; // AnyValue.string_value
          if (key !== undefined && text !== undefined) attributes[key] = text.toString('utf8');
        }
        spans.push({ name: sub(span, 5)[0]?.toString('utf8') ?? '', attributes });
      }
    }
  }
  return spans;
}

export async function startTraceCollector(address: string, port = 4317): Promise<TraceCollector> {
  const spans: ReceivedSpan[] = [];
  let exports = 0;
  const server = http2.createServer();
  // Envoy keeps its connection open; stop() closes them, or close() would wait for ever.
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      let status = 0;
      let message = '';
      if (headers[':path'] !== EXPORT_PATH) {
        status = 12; // UNIMPLEMENTED
        message = `only ${EXPORT_PATH}`;
      } else {
        // gRPC framing: one byte "compressed", four bytes length, then the message.
        for (let i = 0; i + 5 <= body.length;) {
          const len = body.readUInt32BE(i + 1);
          if (body[i] !== 0) {
            status = 12;
            message = 'compressed messages are not accepted';
            break;
          }
          spans.push(...decodeSpans(body.subarray(i + 5, i + 5 + len)));
          i += 5 + len;
        }
        exports++;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(status), ...(message ? { 'grpc-message': message } : {}) }));
      // An empty ExportTraceServiceResponse.
      stream.end(status === 0 ? Buffer.from([0, 0, 0, 0, 0]) : undefined);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
  return {
    address,
    port: (server.address() as AddressInfo).port,
    spans,
    exports: () => exports,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
