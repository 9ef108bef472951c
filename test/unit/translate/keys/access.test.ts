import { grantingGroups } from '../../../../src/translate/keys/access';

const model = (access?: { public?: boolean; groups?: string[] }) => ({ spec: { access } });

describe('grantingGroups', () => {
  it.each([
    ['a group overlap grants, recording only the overlapping groups', model({ groups: ['team-a', 'team-b'] }), ['team-b', 'other', 'team-a', 'team-a'], { allowed: true, grantedBy: 'groups', groups: ['team-a', 'team-b'] }],
    ['no overlap refuses', model({ groups: ['team-a'] }), ['team-b'], { allowed: false, groups: [] }],
    ['no access at all refuses', model(), ['team-a'], { allowed: false, groups: [] }],
    ['a model without spec refuses', {}, ['team-a'], { allowed: false, groups: [] }],
    ['public grants everyone', model({ public: true }), [], { allowed: true, grantedBy: 'public', groups: [] }],
    ['public still records overlapping groups', model({ public: true, groups: ['team-a'] }), ['team-a', 'x'], { allowed: true, grantedBy: 'public', groups: ['team-a'] }],
    ['public: false with a group overlap grants by groups', model({ public: false, groups: ['g'] }), ['g'], { allowed: true, grantedBy: 'groups', groups: ['g'] }],
  ])('%s', (_name, m, userGroups, expected) => {
    expect(grantingGroups(m, userGroups)).toEqual(expected);
  });
});
