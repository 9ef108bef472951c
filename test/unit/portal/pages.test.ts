import { escapeHtml, html, Html } from '../../../src/portal/pages/html';
import { page } from '../../../src/portal/pages/layout';
import { modelsPage } from '../../../src/portal/pages/models';
import { exampleCurl, mintedPage } from '../../../src/portal/pages/minted';
import { keyTable } from '../../../src/portal/pages/keys';
import { PortalModel } from '../../../src/portal/models';

const evil = `<script>alert("x")</script>' onmouseover='x`;
const model = (name: string, extra: Partial<PortalModel> = {}): PortalModel => ({
  ref: { kind: 'PassthroughModel', name, namespace: 'llm' },
  access: { groups: ['team-a'] },
  servedName: `${name}-id`,
  externalEnabled: true,
  deleting: false,
  ...extra,
});

describe('html', () => {
  it('escapes every interpolated string, and only those', () => {
    expect(escapeHtml(`<a href="x">'&\``)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#96;');
    expect(html`<p title="${evil}">${evil}</p>`.value).not.toMatch(/<script|' onmouseover/);
    expect(html`<div>${html`<b>${'<i>'}</b>`}</div>`.value).toBe('<div><b>&#60;i&#62;</b></div>');
    expect(html`${['<a>', new Html('<b>')]}${undefined}${null}${false}${0}`.value).toBe('&#60;a&#62;<b>0');
  });

  it('never lets a user-supplied name, description or group inject markup into a page', () => {
    const out = page(evil, { username: evil, isAdmin: true, csrf: evil }, modelsPage([model('m', { access: { groups: [evil] }, servedName: evil })], { csrf: evil, defaultDays: 30, maxDays: 90, error: evil }));
    expect(out).not.toMatch(/<script>alert/);
    expect(out).not.toContain(`' onmouseover='x`);
    const table = keyTable([{ model: { kind: 'PassthroughModel', name: 'm', namespace: 'llm' }, record: { clientId: evil, createdBy: evil, createdAt: evil, description: evil } }], { csrf: 't', showOwner: true, returnTo: evil }).value;
    expect(table).not.toMatch(/<script>alert/);
  });
});

describe('pages', () => {
  it('the layout has landmarks, a skip link, a viewport and admin links only for admins', () => {
    const user = page('Models', { username: 'alice', isAdmin: false, csrf: 't' }, html`x`);
    expect(user).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(user).toMatch(/<header>[\s\S]*<nav aria-label="Main">[\s\S]*<main id="main"/);
    expect(user).toContain('<a class="skip" href="#main">');
    expect(user).not.toContain('/admin/keys');
    expect(page('Models', { username: 'root', isAdmin: true, csrf: 't' }, html`x`)).toContain('href="/admin/audit"');
  });

  it('the mint form has a label for every field, the configured expiry bounds and the tiers', () => {
    const out = modelsPage([model('a'), model('b', { deleting: true })], { csrf: 'tok', defaultDays: 7, maxDays: 30, tiers: { default: 'large', tiers: [{ name: 'small' }, { name: 'large', description: '1M tokens/day' }] } }).value;
    for (const id of ['model', 'description', 'days', 'tier']) expect(out).toContain(`<label for="${id}">`);
    expect(out).toContain('min="1" max="30" value="7"');
    expect(out).toContain('<option value="large" selected>large — 1M tokens/day</option>');
    expect(out).toContain('value="PassthroughModel/a"');
    expect(out).not.toContain('value="PassthroughModel/b"'); // being deleted: listed, not offered
    expect(out).toContain('<input type="hidden" name="csrf" value="tok">');
  });

  it('the minted page shows the key once with an example curl for the model id', () => {
    const key = 'sk-' + 'a'.repeat(43);
    const out = mintedPage(model('m'), 'user-alice-m-1', key, new Date('2030-01-01T00:00:00Z'), 'https://llm.example.com').value;
    expect(out).toContain(`<output id="api-key" class="secret">${key}</output>`);
    expect(out).toContain('&#34;model&#34;:&#34;m-id&#34;');
    expect(exampleCurl('https://llm.example.com', "it's", key)).toBe(
      `curl https://llm.example.com/v1/chat/completions \\\n  -H "Authorization: Bearer ${key}" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model":"it'\\''s","messages":[{"role":"user","content":"Hello!"}]}'`,
    );
  });
});
