// A small seeded generator of objects from a CRD schema, for the conversion fuzz: every field the
// schema knows, present or not at random, plus what a stored object can still surprise a
// converter with (a value of the wrong type, a key the schema does not know, our own annotation
// holding something that is not a restore record).
import type { JsonSchema } from '../../../../src/api';
import type { Json, JsonObject } from '../../../../src/api/conversion';

/** mulberry32: a tiny deterministic PRNG, so a failing case is reproducible from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Strings that matter to some mapping (path prefixes with and without slashes, the old default).
const WORDS = ['', 'v1', '/v1', 'v1/', '/', 'api/v1', '/api/v1/', 'x', 'grpc', 'http/protobuf', 'Bedrock', 'OpenAI', 'secret-a', '--max-model-len=8192'];

export class ObjectGenerator {
  private readonly random: () => number;

  constructor(seed: number, private readonly oddness = 0.04) {
    this.random = seededRandom(seed);
  }

  private chance(p: number): boolean {
    return this.random() < p;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  private odd(): Json {
    return this.pick<Json>([42, 'surprise', true, null, [1, 'two'], { unknown: { nested: 1 } }]);
  }

  private freeForm(depth: number): JsonObject {
    const out: JsonObject = {};
    const n = Math.floor(this.random() * 3);
    for (let i = 0; i < n; i++) out[`k${i}`] = depth > 1 || this.chance(0.5) ? this.pick(WORDS) : this.freeForm(depth + 1);
    return out;
  }

  /** A value for `schema`; `depth` bounds recursion in free-form parts. */
  value(schema: JsonSchema, depth = 0): Json {
    if (this.chance(this.oddness)) return this.odd();
    if (Array.isArray(schema.enum)) return this.pick(schema.enum as Json[]);
    if (schema['x-kubernetes-int-or-string'] === true) return this.chance(0.5) ? Math.floor(this.random() * 100) : `${Math.floor(this.random() * 100)}Gi`;
    switch (schema.type) {
      case 'object': {
        const properties = schema.properties as Record<string, JsonSchema> | undefined;
        if (!properties) {
          if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) {
            const out: JsonObject = {};
            const n = Math.floor(this.random() * 3);
            for (let i = 0; i < n; i++) out[`key-${i}`] = this.value(schema.additionalProperties as JsonSchema, depth + 1);
            return out;
          }
          return this.freeForm(depth);
        }
        const required = new Set((schema.required as string[] | undefined) ?? []);
        const out: JsonObject = {};
        for (const [name, child] of Object.entries(properties)) {
          if (required.has(name) || this.chance(0.6)) out[name] = this.value(child, depth + 1);
        }
        if (this.chance(this.oddness)) out[`unknownField${Math.floor(this.random() * 10)}`] = this.odd();
        return out;
      }
      case 'array': {
        const n = Math.floor(this.random() * 3);
        return Array.from({ length: n }, () => this.value(schema.items as JsonSchema, depth + 1));
      }
      case 'string':
        return this.pick(WORDS);
      case 'integer':
      case 'number':
        return Math.floor(this.random() * 10);
      case 'boolean':
        return this.chance(0.5);
      default:
        return this.freeForm(depth);
    }
  }

  /** A whole object of `kind` in `apiVersion` from the version's `openAPIV3Schema`. */
  object(root: JsonSchema, apiVersion: string, kind: string, ourAnnotations: readonly string[]): JsonObject {
    const properties = root.properties as Record<string, JsonSchema>;
    const object: JsonObject = { apiVersion, kind, metadata: { name: `obj-${Math.floor(this.random() * 1e6)}`, namespace: 'fuzz' } };
    const annotations: JsonObject = {};
    if (this.chance(0.3)) annotations['example.com/note'] = this.pick(WORDS);
    // Not a restore record: it must be carried over like any annotation.
    if (this.chance(0.1)) annotations[this.pick(ourAnnotations)] = this.pick(['{"restore":"no"}', 'not json', '{}']);
    if (Object.keys(annotations).length > 0) (object.metadata as JsonObject).annotations = annotations;
    object.spec = this.value(properties.spec);
    if (this.chance(0.5)) object.status = this.value(properties.status);
    if (this.chance(this.oddness)) object.unexpectedTopLevel = this.odd();
    return object;
  }
}
