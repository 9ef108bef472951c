// The webhook's index of served ids and generated names, kept from watch events, must answer what
// a walk over every model answers.
import { ModelIndex, modelIndexKey } from '../../../src/webhook/model-index';
import { gatewayObjectNames, generatedNames, namesMayBeCut, sharedGeneratedNames } from '../../../src/translate/gateway/names';
import { type ServingModel, servedIdKey, servedModelIds } from '../../../src/translate/gateway/served-ids';
import { seededRandom } from '../../support/seeded-random';

function model(kind: string, name: string, ids: string[], internal: boolean): ServingModel {
  const endpoints = { internal: { enabled: internal } };
  return kind === 'LLMModel' ? { kind, metadata: { name }, spec: { model: { name: ids[0] }, endpoints } } : { kind, metadata: { name }, spec: { models: { declared: ids }, endpoints } };
}

/** A name whose names are all uncut, one of which is `long`'s cut internal traffic policy name. */
const twinOf = (long: string) => gatewayObjectNames(long).trafficPolicy('internal').slice(0, -'-internal-traffic'.length);

describe('ModelIndex', () => {
  // Short names, names long enough that some generated names are cut and hashed, and short names
  // that generate a long name's cut name (the clash the generated-name rule refuses).
  const longNames = Array.from({ length: 6 }, (_, i) => `${'long-model-name-'.repeat(3)}${i}`);
  const names = [...Array.from({ length: 6 }, (_, i) => `m${i}`), ...longNames, ...longNames.slice(0, 3).map(twinOf)];

  it('makes twins that are not indexed by name and do clash', () => {
    for (const long of longNames.slice(0, 3)) {
      expect(namesMayBeCut(twinOf(long))).toBe(false);
      expect(sharedGeneratedNames(long, twinOf(long))).toEqual([`BackendTrafficPolicy ${gatewayObjectNames(long).trafficPolicy('internal')}`]);
    }
  });

  it('answers what a walk over every model answers, through 3,000 random changes', () => {
    const random = seededRandom(11);
    const pick = (n: number) => Math.floor(random() * n);
    const kinds = ['LLMModel', 'PassthroughModel'];
    const models = new Map<string, ServingModel>();
    const index = new ModelIndex();
    const walk = (matches: (m: ServingModel) => boolean) => new Set([...models].filter(([, m]) => matches(m)).map(([key]) => key));
    let twinsFound = 0;

    for (let step = 0; step < 3_000; step++) {
      const kind = kinds[pick(2)];
      const name = names[pick(names.length)];
      if (pick(3) > 0) {
        const m = model(kind, name, [`id${pick(5)}`, ...(pick(2) ? [`id${pick(5)}`] : [])], pick(3) > 0);
        models.set(modelIndexKey(kind, name), m);
        index.set(kind, m);
        if (pick(4) === 0) index.set(kind, m); // an event applied twice
      } else {
        models.delete(modelIndexKey(kind, name));
        index.delete(kind, name);
      }

      const idKeys = servedModelIds(model(kinds[pick(2)], 'q', [`id${pick(5)}`], pick(2) > 0)).map(servedIdKey);
      expect(index.serving(idKeys)).toEqual(walk((m) => servedModelIds(m).some((s) => idKeys.includes(servedIdKey(s)))));
      // Exactly the models sharing a generated name of any kind: a superset of those the rule refuses.
      const query = names[pick(names.length)];
      const generating = walk((m) => generatedNames(m.metadata!.name!).some((n) => generatedNames(query).includes(n)));
      expect(index.generating(query)).toEqual(generating);
      for (const m of models.values()) if (sharedGeneratedNames(query, m.metadata!.name!).length > 0) expect(generating.has(modelIndexKey(m.kind!, m.metadata!.name!))).toBe(true);
      if ([...generating].some((key) => !key.endsWith(`/${query}`))) twinsFound++;
    }
    // Clashes between different names were found often (a generator that never makes one proves nothing).
    expect(twinsFound).toBeGreaterThan(300);
  });
});
