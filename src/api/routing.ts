// `spec.routing` (v1beta1 only): how the gateway treats a model's requests when its upstream
// misbehaves: retries, timeouts, fallback to other models and weighted splits between models
// (docs/design/routing.md). Fallback and splits exist only on PassthroughModel: Envoy AI Gateway
// v1.1 routes one rule to one InferencePool, or to AIServiceBackends, never both
// (envoyproxy/ai-gateway#1256), so an LLMModel can be neither a source nor a target of either.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { ObjectNameSchema, StringEnum } from './common';
import { DURATION_PATTERN } from './llmmodel';

export const ROUTING_LIMITS = { maxAttempts: 10, maxFallbacks: 4, maxSplits: 4, maxWeight: 1000, maxStatusCodes: 8 } as const;

/**
 * Envoy's retry triggers for failures without an answer, by their Envoy names. Upstream statuses
 * are retried by listing them in `statusCodes`: through AI Gateway v1.1 and Envoy Gateway v1.8.1,
 * Envoy's `5xx` trigger did not retry a provider's 500 (test/e2e/routing.test.ts), while a listed
 * status did, so the status triggers are not offered.
 */
export const RETRY_CONDITIONS = ['connect-failure', 'reset', 'reset-before-request', 'refused-stream'] as const;
export type RetryCondition = (typeof RETRY_CONDITIONS)[number];

export const ROUTING_DEFAULTS = {
  /** Retried when `retries` names no conditions: the failures that prove the request was not answered, and 503. */
  retryOn: ['connect-failure', 'reset', 'refused-stream'] as readonly RetryCondition[],
  retryStatusCodes: [503] as readonly number[],
  /** Passive health check: an upstream that answered this many 5xx/connect errors in a row is skipped. */
  consecutiveFailures: 1,
  /** How long a skipped upstream stays skipped before it is tried again. */
  ejectionTime: '30s',
} as const;

const Duration = (description: string) => Type.String({ description, pattern: DURATION_PATTERN, maxLength: 32 });

export const RoutingRetriesSchema = Type.Object(
  {
    attempts: Type.Integer({
      description: `attempts is how many times a failed request is tried again (0 to ${ROUTING_LIMITS.maxAttempts}); each try may go to the next fallback model.`,
      minimum: 0,
      maximum: ROUTING_LIMITS.maxAttempts,
    }),
    retryOn: Type.Optional(
      Type.Array(StringEnum(RETRY_CONDITIONS), {
        description: `retryOn lists the failures that are retried (Envoy retry conditions). Omitted means ${ROUTING_DEFAULTS.retryOn.join(', ')} plus the statusCodes.`,
        maxItems: RETRY_CONDITIONS.length,
        'x-kubernetes-list-type': 'set',
      }),
    ),
    statusCodes: Type.Optional(
      Type.Array(Type.Integer({ minimum: 400, maximum: 599 }), {
        description: `statusCodes are upstream answers that are retried (and, with fallback models, sent to the next one), for example 429, 500, 502, 503, 504. Omitted means ${ROUTING_DEFAULTS.retryStatusCodes.join(', ')}.`,
        maxItems: ROUTING_LIMITS.maxStatusCodes,
        'x-kubernetes-list-type': 'set',
      }),
    ),
    perTryTimeout: Type.Optional(
      Duration('perTryTimeout bounds each whole try, a streamed answer included (a Gateway API duration such as 10s); a try that runs out is retried. For streamed answers prefer spec.routing.timeouts.streamIdle, which never cuts a steady stream. Omitted means none.'),
    ),
    backoff: Type.Optional(
      Type.Object(
        {
          baseInterval: Duration('baseInterval is the first wait between tries (e.g. 100ms); later waits grow up to maxInterval.'),
          maxInterval: Type.Optional(Duration('maxInterval is the longest wait between tries. Omitted means 10 times baseInterval.')),
        },
        { description: 'backoff is the wait between tries. Omitted means the proxy default (25ms, growing).' },
      ),
    ),
  },
  { description: 'retries tries a failed request again, on this model or on the next fallback model.' },
);

export const RoutingTimeoutsSchema = Type.Object(
  {
    request: Type.Optional(
      Duration(
        'request is the longest a whole request may take, streamed answer included (a Gateway API duration such as 600s; 0s means no limit). Omitted means the platform default of the kind.',
      ),
    ),
    streamIdle: Type.Optional(
      Duration(
        'streamIdle bounds each try\'s silence: an upstream that sends nothing for this long before answering is reset (and retried when retries.retryOn has reset), one that falls silent during a streamed answer is cut (a Gateway API duration such as 30s). A steady stream is never cut by it. Omitted means no idle limit.',
      ),
    ),
  },
  { description: 'timeouts bound how long a request may take and how long the upstream may stay silent.' },
);

const ModelNameOverride = Type.Optional(
  Type.String({
    description:
      'model is the model id sent to that model\'s provider in place of the one the client sent. Omitted means the client\'s id is sent unchanged, so the target must serve it.',
    minLength: 1,
    maxLength: 256,
  }),
);

export const RoutingFallbackSchema = Type.Object(
  {
    name: ObjectNameSchema('name of a PassthroughModel in the same namespace whose provider takes the requests when the ones before it fail.'),
    model: ModelNameOverride,
  },
  { description: 'A model to fall back to.' },
);

export const RoutingSplitSchema = Type.Object(
  {
    name: ObjectNameSchema('name of a PassthroughModel in the same namespace that receives a share of this model\'s requests.'),
    weight: Type.Integer({ description: `weight is that model's share relative to spec.routing.weight and the other splits (0 to ${ROUTING_LIMITS.maxWeight}).`, minimum: 0, maximum: ROUTING_LIMITS.maxWeight }),
    model: ModelNameOverride,
  },
  { description: 'A model that shares this model\'s requests.' },
);

const commonRouting = {
  retries: Type.Optional(RoutingRetriesSchema),
  timeouts: Type.Optional(RoutingTimeoutsSchema),
};

/** PassthroughModel `spec.routing`: retries, timeouts, fallback and splits. */
export const PassthroughRoutingSchema = Type.Object(
  {
    ...commonRouting,
    fallback: Type.Optional(
      Type.Array(RoutingFallbackSchema, {
        description: `fallback is an ordered list of other PassthroughModels (at most ${ROUTING_LIMITS.maxFallbacks}) used when this model's provider fails: each retry goes to the next one, and a provider that keeps failing is skipped for a while.`,
        maxItems: ROUTING_LIMITS.maxFallbacks,
      }),
    ),
    weight: Type.Optional(
      Type.Integer({
        description: `weight is this model's own share when split lists other models (0 to ${ROUTING_LIMITS.maxWeight}). Omitted means 100.`,
        minimum: 0,
        maximum: ROUTING_LIMITS.maxWeight,
      }),
    ),
    split: Type.Optional(
      Type.Array(RoutingSplitSchema, {
        description: `split shares this model's requests with other PassthroughModels by weight (at most ${ROUTING_LIMITS.maxSplits}), for example a canary of a new provider. Weights can be changed at any time without failing requests.`,
        maxItems: ROUTING_LIMITS.maxSplits,
      }),
    ),
  },
  { description: 'routing configures retries, timeouts, fallback to other models and weighted splits (docs/routing.md). Admission checks the models named exist and fit (src/webhook/routing.ts).' },
);
export type PassthroughRouting = Static<typeof PassthroughRoutingSchema>;

/**
 * LLMModel `spec.routing`: retries and timeouts only. The fallback and split fields are in the
 * schema so that writing them gets admission's reason they cannot work rather than a silent prune.
 * The cross-field rules live in the webhook, not in CEL: they need the namespace's models anyway.
 */
export const LLMModelRoutingSchema = Type.Object(
  {
    ...commonRouting,
    fallback: Type.Optional(Type.Array(RoutingFallbackSchema, { description: 'fallback is not supported for LLMModels (see the validation message).', maxItems: ROUTING_LIMITS.maxFallbacks })),
    split: Type.Optional(Type.Array(RoutingSplitSchema, { description: 'split is not supported for LLMModels (see the validation message).', maxItems: ROUTING_LIMITS.maxSplits })),
  },
  { description: 'routing configures retries and timeouts of the model\'s routes (docs/routing.md). fallback and split are refused by admission (src/webhook/routing.ts).' },
);
export type LLMModelRouting = Static<typeof LLMModelRoutingSchema>;

/** The weight of the model itself in a split, applying the default. */
export function ownSplitWeight(routing: PassthroughRouting | undefined): number {
  return routing?.weight ?? 100;
}
