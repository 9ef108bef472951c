// The agent key's decisions (issue 29, Medium 4): which model a key is revoked on when the agent is
// re-pointed, when it is rotated before expiry, which keys are the agent's, and which Secret is its own.
import {
  AGENT_KEY_LIFETIME_MS,
  AGENT_KEY_ROTATE_BEFORE_MS,
  agentKeyIds,
  agentKeySecretMetadata,
  agentKeyStateOf,
  keySecretConflictMessage,
  ownedByAgent,
  planAgentKey,
} from '../../../../src/translate/agents/agent-key';
import { mintApiKey, parseApiKeyRecord, type ModelRef } from '../../../../src/translate/keys/api-keys';

const ns = 'team';
const gpt: ModelRef = { kind: 'PassthroughModel', name: 'gpt', namespace: ns };
const qwen: ModelRef = { kind: 'LLMModel', name: 'qwen', namespace: ns };
const now = new Date('2030-01-01T00:00:00Z');
const agent = { namespace: ns, name: 'helper', uid: 'uid-1' };

describe('agent key', () => {
  it('records the model and client ID on the agent key Secret, and reads them back', () => {
    const expiresAt = new Date(now.getTime() + AGENT_KEY_LIFETIME_MS);
    const meta = agentKeySecretMetadata(gpt, 'client-a', expiresAt);
    expect(agentKeyStateOf(meta.annotations, ns)).toEqual({ model: gpt, clientId: 'client-a', expiresAt: '2030-01-31T00:00:00.000Z' });
    expect(agentKeyStateOf(undefined, ns)).toEqual({ model: undefined, clientId: undefined, expiresAt: undefined });
    expect(agentKeyStateOf({ 'llm.nebari.dev/key-model-kind': 'Deployment', 'llm.nebari.dev/key-model-name': 'x' }, ns).model).toBeUndefined();
  });

  it('plans: mint a first key, keep a live one until rotation, rotate before expiry, re-mint a revoked one', () => {
    const expiresAt = new Date(now.getTime() + AGENT_KEY_LIFETIME_MS).toISOString();
    const held = { model: gpt, clientId: 'client-a', expiresAt };
    expect(planAgentKey(undefined, gpt, false, now)).toEqual({ action: 'mint', reason: 'the agent has no key yet' });
    expect(planAgentKey(held, gpt, true, now)).toEqual({ action: 'keep', rotateAt: new Date(Date.parse(expiresAt) - AGENT_KEY_ROTATE_BEFORE_MS) });
    const dueForRotation = new Date(Date.parse(expiresAt) - AGENT_KEY_ROTATE_BEFORE_MS);
    expect(planAgentKey(held, gpt, true, dueForRotation)).toMatchObject({ action: 'mint', reason: expect.stringContaining('rotating') });
    expect(planAgentKey(held, gpt, false, now)).toMatchObject({ action: 'mint', reason: expect.stringContaining('no longer one of the model') });
    expect(planAgentKey({ ...held, expiresAt: 'soon' }, gpt, true, now)).toMatchObject({ action: 'mint' });
  });

  it('plans to revoke on the model the agent was bound to before when it is re-pointed', () => {
    const held = { model: gpt, clientId: 'client-a', expiresAt: new Date(now.getTime() + AGENT_KEY_LIFETIME_MS).toISOString() };
    expect(planAgentKey(held, qwen, true, now)).toEqual({ action: 'mint', reason: 'the agent now uses LLMModel qwen instead of PassthroughModel gpt', revokeOn: gpt });
  });

  it("finds the agent's keys by uid in a model's metadata records, not another agent's of the same name", () => {
    const mint = (uid: string, seed: number) =>
      mintApiKey(undefined, undefined, { model: gpt, user: 'AgentDeployment team/helper', now, random: new Uint8Array(32).fill(seed), idRandom: new Uint8Array(8).fill(seed), grant: { source: 'agent', agent: { ...agent, uid } } });
    const mine = mint('uid-1', 1);
    const older = mint('uid-0', 2);
    const metadata = { ...mine.metadataData, ...older.metadataData, 'cli-key': JSON.stringify({ createdBy: 'root', createdAt: now.toISOString() }) };
    expect(agentKeyIds(metadata, 'uid-1')).toEqual([mine.clientId]);
    expect(parseApiKeyRecord(mine.clientId, mine.metadataData[mine.clientId])).toMatchObject({ source: 'agent', agent: { namespace: ns, name: 'helper', uid: 'uid-1' } });
  });

  it('owns only a Secret with an owner reference to this very agent', () => {
    expect(ownedByAgent({ metadata: { ownerReferences: [{ kind: 'AgentDeployment', uid: 'uid-1' }] } }, agent)).toBe(true);
    expect(ownedByAgent({ metadata: { ownerReferences: [{ kind: 'AgentDeployment', uid: 'uid-0' }] } }, agent)).toBe(false);
    expect(ownedByAgent({ metadata: {} }, agent)).toBe(false);
    expect(keySecretConflictMessage(agent, 'helper-model-key')).toBe(
      'Secret team/helper-model-key exists and is not owned by AgentDeployment helper (no owner reference to uid uid-1), so the operator does not write the agent\'s key into it; delete or rename that Secret, or rename the agent',
    );
  });
});
