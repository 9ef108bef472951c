// Which cached models serve a model id, and which may generate an object name another model
// generates: the two questions admission asks of every model of the namespace on each CREATE
// (model-placement.ts). Answered by walking every model, a CREATE cost grew with the namespace (a
// walk of 5,000 per admission at 5,000 models). The index is kept from the model cache's watch
// events, so an answer costs the few models it names. It only narrows: the rules still run on the
// models it returns.
//
// Generated names are kept only for models with names long enough that some are cut (and hashed).
// A model whose names are all uncut generates `<its name><suffix>`, so the models that generate a
// name uncut are found from the name itself (uncutOwners), without keeping ~13 names per model.
import { generatedNames, namesMayBeCut, uncutOwners } from '../translate/gateway/names';
import { type ServingModel, servedIdKey, servedModelIds } from '../translate/gateway/served-ids';

/** A model's key in the index: `<kind>/<name>` (one namespace is cached). */
export const modelIndexKey = (kind: string, name: string): string => `${kind}/${name}`;

/** Most keys have one holder: a string then, a Set only when several share the key. */
type Holders = Map<string, string | Set<string>>;

export class ModelIndex {
  /** Every model's served ids (servedIdKey), by model key. */
  private readonly ids = new Map<string, readonly string[]>();
  private readonly kinds = new Set<string>();
  private readonly byId: Holders = new Map();
  /** The generated names of the models some of whose names are cut. */
  private readonly byName: Holders = new Map();

  /** A model was added or changed (applying one twice changes nothing). */
  set(kind: string, model: ServingModel): void {
    const name = model.metadata?.name;
    if (!name) return;
    const key = modelIndexKey(kind, name);
    const old = this.ids.get(key);
    const ids = [...new Set(servedModelIds({ ...model, kind }).map(servedIdKey))];
    if (old) for (const id of old) remove(this.byId, id, key);
    for (const id of ids) add(this.byId, id, key);
    // The name never changes: its generated names are indexed once, when the model first comes.
    if (!old && namesMayBeCut(name)) for (const n of generatedNames(name)) add(this.byName, n, key);
    this.ids.set(key, ids);
    this.kinds.add(kind);
  }

  delete(kind: string, name: string): void {
    const key = modelIndexKey(kind, name);
    const old = this.ids.get(key);
    if (!old) return;
    for (const id of old) remove(this.byId, id, key);
    if (namesMayBeCut(name)) for (const n of generatedNames(name)) remove(this.byName, n, key);
    this.ids.delete(key);
  }

  /** Keys of the models serving any of `idKeys` (servedIdKey), deleting ones included. */
  serving(idKeys: Iterable<string>): Set<string> {
    const found = new Set<string>();
    for (const id of idKeys) holdersOf(this.byId, id, found);
    return found;
  }

  /** Keys of the models that may generate a name `modelName` generates (itself included, if indexed). */
  generating(modelName: string): Set<string> {
    const found = new Set<string>();
    for (const n of generatedNames(modelName)) {
      holdersOf(this.byName, n, found);
      for (const owner of uncutOwners(n)) {
        for (const kind of this.kinds) if (this.ids.has(modelIndexKey(kind, owner))) found.add(modelIndexKey(kind, owner));
      }
    }
    return found;
  }
}

function add(holders: Holders, k: string, model: string): void {
  const current = holders.get(k);
  if (current === undefined) holders.set(k, model);
  else if (typeof current === 'string') {
    if (current !== model) holders.set(k, new Set([current, model]));
  } else current.add(model);
}

function remove(holders: Holders, k: string, model: string): void {
  const current = holders.get(k);
  if (current === model) holders.delete(k);
  else if (current instanceof Set) {
    current.delete(model);
    if (current.size === 1) holders.set(k, current.values().next().value!);
  }
}

function holdersOf(holders: Holders, k: string, into: Set<string>): void {
  const current = holders.get(k);
  if (typeof current === 'string') into.add(current);
  else if (current) for (const model of current) into.add(model);
}
