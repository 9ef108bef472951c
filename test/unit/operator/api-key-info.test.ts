import { ApiKeyInfo } from '../../../src/operator/api-key-info';
import { operatorMetrics } from '../../../src/operator/runtime/metrics';
import type { ModelRef } from '../../../src/translate/keys/api-keys';

const alpha: ModelRef = { kind: 'PassthroughModel', name: 'alpha', namespace: 'llm' };
const tiny: ModelRef = { kind: 'LLMModel', name: 'tiny', namespace: 'llm' };
const record = (createdBy: string, expiresAt?: string) => JSON.stringify({ createdBy, createdAt: '2026-01-01T00:00:00Z', ...(expiresAt ? { expiresAt } : {}) });

/** The exposition lines of nls_api_key_info, as Prometheus would scrape them. */
async function infoLines(metrics: ReturnType<typeof operatorMetrics>): Promise<string[]> {
  return (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('nls_api_key_info{'));
}

describe('ApiKeyInfo (nls_api_key_info)', () => {
  it('exports one series per key in the Secret, less those just revoked; metadata without a key is not a key', async () => {
    const metrics = operatorMetrics();
    const info = new ApiKeyInfo(metrics.apiKeyInfo);
    info.set(alpha, ['c-1', 'c-2', 'c-3'], { 'c-1': record('ana'), 'c-2': record('bo'), 'c-9': record('gone') }, new Set(['c-3']));
    expect(await infoLines(metrics)).toEqual([
      'nls_api_key_info{client_id="c-1",namespace="llm",model="alpha",model_kind="PassthroughModel",owner="ana",groups="",tier="",source=""} 1',
      'nls_api_key_info{client_id="c-2",namespace="llm",model="alpha",model_kind="PassthroughModel",owner="bo",groups="",tier="",source=""} 1',
    ]);
  });

  it('replaces only the updated model\'s series, drops a deleted model\'s, and clears all when leadership ends', async () => {
    const metrics = operatorMetrics();
    const info = new ApiKeyInfo(metrics.apiKeyInfo);
    info.set(alpha, ['c-1'], { 'c-1': record('ana') }, new Set());
    info.set(tiny, ['t-1'], { 't-1': record('cy') }, new Set());
    info.set(alpha, ['c-2'], { 'c-2': record('bo') }, new Set());
    expect((await infoLines(metrics)).map((l) => /client_id="([^"]+)"/.exec(l)![1]).sort()).toEqual(['c-2', 't-1']);
    info.delete(tiny);
    expect((await infoLines(metrics)).map((l) => /client_id="([^"]+)"/.exec(l)![1])).toEqual(['c-2']);
    info.clear();
    expect(await infoLines(metrics)).toEqual([]);
  });

  it('exports the expiry of each live key that has one (nls_api_key_expiry_timestamp_seconds), replaced and cleared with the info series', async () => {
    const metrics = operatorMetrics();
    const info = new ApiKeyInfo(metrics.apiKeyInfo, metrics.apiKeyExpiry);
    const expiryLines = async () => (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('nls_api_key_expiry_timestamp_seconds{'));
    info.set(alpha, ['c-1', 'c-2', 'c-3'], { 'c-1': record('ana', '2026-03-01T00:00:00Z'), 'c-2': record('bo'), 'c-3': record('cy', '2026-04-01T00:00:00Z') }, new Set(['c-3']));
    expect(await expiryLines()).toEqual([
      `nls_api_key_expiry_timestamp_seconds{client_id="c-1",namespace="llm",model="alpha",model_kind="PassthroughModel",owner="ana"} ${Date.parse('2026-03-01T00:00:00Z') / 1000}`,
    ]);
    info.set(alpha, ['c-2'], { 'c-2': record('bo') }, new Set());
    expect(await expiryLines()).toEqual([]);
    info.set(tiny, ['t-1'], { 't-1': record('dee', '2026-05-01T00:00:00Z') }, new Set());
    info.clear();
    expect(await expiryLines()).toEqual([]);
  });
});
