import { keysLosingAccess } from '../../../src/portal/group-refresh';
import { isAdmin, safeReturnTo, visibleModels } from '../../../src/portal/app';
import { PortalModel } from '../../../src/portal/models';
import { ModelKey } from '../../../src/portal/keys';
import { groupsFromClaim, usernameFromClaims } from '../../../src/portal/oidc';

const model = (name: string, access: PortalModel['access']): PortalModel => ({ ref: { kind: 'PassthroughModel', name, namespace: 'llm' }, access, servedName: name, externalEnabled: true, deleting: false });
const models = [model('open', { public: true }), model('a', { groups: ['team-a'] }), model('b', { groups: ['team-b', 'team-c'] })];
const key = (m: string, clientId: string, record: Partial<ModelKey['record']>): ModelKey => ({ model: { kind: 'PassthroughModel', name: m, namespace: 'llm' }, record: { clientId, createdBy: 'alice', createdAt: '', ...record } });

describe('visibleModels', () => {
  it('shows public models and those sharing a group', () => {
    expect(visibleModels(models, ['team-c']).map((m) => m.ref.name)).toEqual(['open', 'b']);
    expect(visibleModels(models, []).map((m) => m.ref.name)).toEqual(['open']);
    expect(visibleModels(models, ['team-a', 'team-b']).map((m) => m.ref.name)).toEqual(['open', 'a', 'b']);
  });
});

describe('keysLosingAccess', () => {
  const keys = [
    key('a', 'k-a', { subject: 'u1', grantedBy: 'groups', groups: ['team-a'] }),
    key('b', 'k-b', { subject: 'u1', grantedBy: 'groups', groups: ['team-b'] }),
    key('open', 'k-open', { subject: 'u1', grantedBy: 'public' }),
    key('a', 'k-admin', { subject: 'u1', grantedBy: 'admin' }),
    key('a', 'k-cli', { grantedBy: undefined }),
    key('a', 'k-other', { subject: 'u2', grantedBy: 'groups', groups: ['team-a'] }),
    key('gone', 'k-gone', { subject: 'u1', grantedBy: 'groups', groups: ['team-a'] }),
  ];
  it('picks exactly the user\'s keys whose model the new groups no longer grant', () => {
    expect(keysLosingAccess(keys, models, 'u1', ['team-a']).map((k) => k.record.clientId)).toEqual(['k-b']);
    expect(keysLosingAccess(keys, models, 'u1', []).map((k) => k.record.clientId)).toEqual(['k-a', 'k-b']);
    // Another group of the model still grants it.
    expect(keysLosingAccess(keys, models, 'u1', ['team-a', 'team-c'])).toEqual([]);
    expect(keysLosingAccess(keys, models, 'u2', [])).toEqual([keys[5]]);
  });
});

describe('small rules', () => {
  it('admins are members of an admin group', () => {
    expect(isAdmin({ adminGroups: ['admins'] }, ['x', 'admins'])).toBe(true);
    expect(isAdmin({ adminGroups: [] }, ['admins'])).toBe(false);
  });
  it('returns only to same-origin paths after login', () => {
    expect(safeReturnTo('/keys?x=1')).toBe('/keys?x=1');
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example', 'keys', undefined, '/a b']) expect(safeReturnTo(bad)).toBe('/');
  });
  it('reads groups and the username from claims', () => {
    expect(groupsFromClaim(['b', 'a', 'b', 3, ''])).toEqual(['a', 'b']);
    expect(groupsFromClaim('solo')).toEqual(['solo']);
    expect(groupsFromClaim(undefined)).toEqual([]);
    expect(usernameFromClaims({ sub: 's', email: 'e@x', preferred_username: 'p' })).toBe('p');
    expect(usernameFromClaims({ sub: 's' })).toBe('s');
  });
  it('takes an email as the username only when the issuer verified it, and never the free-form name (issue 29, Low)', () => {
    expect(usernameFromClaims({ sub: 's', email: 'ceo@example.com' })).toBe('s');
    expect(usernameFromClaims({ sub: 's', email: 'ceo@example.com', email_verified: false })).toBe('s');
    expect(usernameFromClaims({ sub: 's', email: 'ceo@example.com', email_verified: 'true' })).toBe('s');
    expect(usernameFromClaims({ sub: 's', email: 'eve@example.com', email_verified: true })).toBe('eve@example.com');
    expect(usernameFromClaims({ sub: 's', name: 'Administrator' })).toBe('s');
  });
});
