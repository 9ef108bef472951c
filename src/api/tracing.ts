// `spec.observability.tracing` of an LLMModel (v1beta1 only): the serving engine's OpenTelemetry
// traces, in the shape serving platforms use: a collector endpoint, a sampler and its ratio. The
// engine (vLLM, also inside llm-d, Dynamo and KubeRay) exports a span per request; the provider
// translation turns the block into vLLM's `--otlp-traces-endpoint` argument and the standard OTEL_*
// variables of the OpenTelemetry SDK (docs/observability.md, "Tracing").
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { AGENTDEPLOYMENT_LIMITS, OTLP_PROTOCOLS } from './agentdeployment';
import { StringEnum } from './common';

/** The OpenTelemetry SDK's sampler names (`OTEL_TRACES_SAMPLER`). */
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

export const TRACING_DEFAULTS = {
  protocol: 'grpc' as const,
  /** Follow the caller's decision when the request carries a trace, else sample `ratio` of requests. */
  sampler: 'parentbased_traceidratio' as TraceSampler,
  ratio: 1,
};

export const LLMModelTracingSchema = Type.Object(
  {
    endpoint: Type.String({
      description:
        'endpoint is the OpenTelemetry collector the engine sends its traces to, for example http://otel-collector.observability:4317 (grpc) or http://otel-collector.observability:4318/v1/traces (http/protobuf).',
      minLength: 1,
      maxLength: AGENTDEPLOYMENT_LIMITS.maxURLLength,
      // Checked as a URL by the admission webhook, not by CEL: a rule here would add to the
      // LLMModel CRD's CEL cost, which is already close to what the API server accepts.
    }),
    protocol: Type.Optional(StringEnum(OTLP_PROTOCOLS, { description: 'protocol of the collector: grpc or http/protobuf.', default: TRACING_DEFAULTS.protocol })),
    sampler: Type.Optional(
      StringEnum(TRACE_SAMPLERS, {
        description: 'sampler decides which requests are traced (the OpenTelemetry SDK sampler names); the parentbased_ samplers follow a trace the caller started.',
        default: TRACING_DEFAULTS.sampler,
      }),
    ),
    ratio: Type.Optional(
      Type.Number({ description: 'ratio is the share of requests the traceidratio samplers keep, from 0 to 1.', minimum: 0, maximum: 1, default: TRACING_DEFAULTS.ratio }),
    ),
  },
  { description: 'tracing exports a trace of every sampled request from the serving engine to an OpenTelemetry collector.' },
);
export type LLMModelTracing = Static<typeof LLMModelTracingSchema>;

export const LLMModelObservabilitySchema = Type.Object(
  { tracing: Type.Optional(LLMModelTracingSchema) },
  { description: 'observability configures the telemetry the serving engine exports.' },
);

/** The engine arguments and environment that turn tracing on, for every provider that runs vLLM. */
export function tracingEngineSettings(tracing: LLMModelTracing | undefined, serviceName: string): { args: string[]; env: { name: string; value: string }[] } {
  if (!tracing) return { args: [], env: [] };
  return {
    args: [`--otlp-traces-endpoint=${tracing.endpoint}`],
    env: [
      { name: 'OTEL_SERVICE_NAME', value: serviceName },
      { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', value: tracing.protocol ?? TRACING_DEFAULTS.protocol },
      { name: 'OTEL_TRACES_SAMPLER', value: tracing.sampler ?? TRACING_DEFAULTS.sampler },
      { name: 'OTEL_TRACES_SAMPLER_ARG', value: String(tracing.ratio ?? TRACING_DEFAULTS.ratio) },
    ],
  };
}
