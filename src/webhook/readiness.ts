// Readiness of the webhook server: it is ready only when the API server would accept the
// certificate it serves, i.e. every webhook of every one of our configurations that exists has
// a caBundle containing a CA that signed the served certificate. A pod that reports ready
// before that would receive calls that fail TLS verification.
import { isIssuedByAny } from './certificates';
import type { WebhookConfigurationTrust } from './webhook-configurations';

/** The webhooks (as `Kind/name#webhook`) whose caBundle does not verify `servedCertPem`. */
export function webhooksNotTrusting(configurations: readonly WebhookConfigurationTrust[], servedCertPem: string): string[] {
  const untrusted: string[] = [];
  for (const configuration of configurations) {
    for (const webhook of configuration.webhooks) {
      if (!webhook.caBundle || !isIssuedByAny(servedCertPem, webhook.caBundle)) {
        untrusted.push(`${configuration.kind}/${configuration.name}#${webhook.name}`);
      }
    }
  }
  return untrusted;
}

/** The readiness state the health endpoint reads; updated by whoever checks the configurations. */
export class ReadinessGate {
  private state: { ready: boolean; reason: string } = { ready: false, reason: 'not checked yet' };

  ready(): boolean {
    return this.state.ready;
  }

  /** Why the server is (not) ready, for logs and the /readyz body. */
  reason(): string {
    return this.state.reason;
  }

  /** Records the outcome of reading our configurations while serving `servedCertPem`. */
  observe(configurations: readonly WebhookConfigurationTrust[], servedCertPem: string): void {
    const untrusted = webhooksNotTrusting(configurations, servedCertPem);
    this.state =
      untrusted.length === 0
        ? { ready: true, reason: `served certificate trusted by ${configurations.length} webhook configuration(s)` }
        : { ready: false, reason: `caBundle does not verify the served certificate: ${untrusted.join(', ')}` };
  }

  /** Marks the server not ready (e.g. it is shutting down). */
  fail(reason: string): void {
    this.state = { ready: false, reason };
  }
}
