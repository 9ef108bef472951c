// The endpoint's members kept from events must always answer what a walk over every model answers.
import { EndpointMembers, isMember, type PeerObject } from '../../../src/operator/endpoint-members';
import { peerOf } from '../../../src/operator/endpoint-peers';
import { oldestRouted } from '../../../src/translate/gateway';
import { gatewayObjectNames } from '../../../src/translate/gateway/names';
import { sharedIds, type ServedId } from '../../../src/translate/gateway/served-ids';
import type { KubeObject } from '../../../src/kube/rest';
import { seededRandom } from '../../support/seeded-random';

type State = { published: boolean; external: boolean; deleting: boolean; ids: string[] };

function peer(kind: string, name: string, s: State): PeerObject {
  return peerOf({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind,
    metadata: { name, namespace: 'llm', ...(s.deleting ? { deletionTimestamp: '2026-12-05T00:00:00Z' } : {}) },
    spec: kind === 'LLMModel' ? { model: { name: s.ids[0] }, endpoints: { external: { enabled: s.external } } } : { models: { declared: s.ids }, endpoints: { external: { enabled: s.external } } },
    status: s.published ? { conditions: [{ type: 'ExternalEndpointReady', status: 'True' }] } : {},
  } as KubeObject) as PeerObject;
}

const routeName = (name: string) => gatewayObjectNames(name).route('external');

describe('EndpointMembers', () => {
  it('answers what a walk over every model answers, through 3,000 random changes', () => {
    const random = seededRandom(7);
    const pick = (n: number) => Math.floor(random() * n);
    let withOldest = 0;
    const names = Array.from({ length: 12 }, (_, i) => `m${i}`);
    // Each name has one kind: the webhook refuses an LLMModel and a PassthroughModel of one name.
    const kindOf = (name: string) => (Number(name.slice(1)) % 2 ? 'LLMModel' : 'PassthroughModel');
    const models = new Map<string, PeerObject>(); // kind/name -> peer
    const routes = new Map<string, string>(); // route name -> creation time
    let clock = 0;
    const members = new EndpointMembers((route) => routes.get(route));

    for (let step = 0; step < 3_000; step++) {
      const name = names[pick(names.length)];
      const kind = kindOf(name);
      const roll = pick(10);
      if (roll < 5) {
        const p = peer(kind, name, { published: pick(4) > 0, external: pick(5) > 0, deleting: pick(8) === 0, ids: [`id${pick(6)}`, ...(pick(2) ? [`id${pick(6)}`] : [])] });
        models.set(`${kind}/${name}`, p);
        members.set(p);
      } else if (roll < 7) {
        models.delete(`${kind}/${name}`);
        members.delete(kind, name);
      } else if (roll < 9) {
        // Several routes in one second: the name breaks the tie.
        routes.set(routeName(name), `2026-12-05T10:00:${String(Math.floor(clock++ / 3) % 60).padStart(2, '0')}Z`);
        members.routeChanged(routeName(name));
      } else {
        routes.delete(routeName(name));
        members.routeChanged(routeName(name));
      }

      const all = [...models.values()];
      const expectedMembers = all.filter(isMember);
      expect(members.members().map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(expectedMembers.map((m) => `${m.kind}/${m.metadata.name}`).sort());
      const routed = (ms: PeerObject[]) => ms.map((m) => ({ name: m.metadata.name!, routeName: routeName(m.metadata.name!), routeCreated: routes.get(routeName(m.metadata.name!)) }));
      const oldest = new Set(oldestRouted(routed(expectedMembers)).map((m) => m.name));
      expect(members.authenticating()).toEqual(oldest);
      if (oldest.size === 2) withOldest++;
      const ids: ServedId[] = [{ endpoint: 'external', id: `id${pick(6)}` }];
      const serving = (ms: PeerObject[]) => ms.map((m) => `${m.kind}/${m.metadata.name}`).sort();
      expect(serving(members.servingAny(ids))).toEqual(serving(all.filter((m) => !m.metadata.deletionTimestamp && sharedIds(ids, m.served ?? []).length > 0)));
      expect(members.member(kind, name)).toBe(isMember(models.get(`${kind}/${name}`)) ? models.get(`${kind}/${name}`) : undefined);
    }
    // Most steps had two routed members (a generator that never makes one would prove nothing).
    expect(withOldest).toBeGreaterThan(1_500);
  });

  it('counts a candidate that is not a member yet among the oldest without keeping it', () => {
    const routes = new Map([[routeName('b'), '2026-12-05T10:00:00Z'], [routeName('c'), '2026-12-05T10:00:01Z'], [routeName('a'), '2026-12-05T09:00:00Z']]);
    const members = new EndpointMembers((route) => routes.get(route));
    const state = { published: true, external: true, deleting: false, ids: [] };
    members.set(peer('PassthroughModel', 'b', state));
    members.set(peer('PassthroughModel', 'c', state));
    expect(members.authenticating(peer('PassthroughModel', 'a', { ...state, published: false }))).toEqual(new Set(['a', 'b']));
    expect(members.authenticating()).toEqual(new Set(['b', 'c']));
  });
});
