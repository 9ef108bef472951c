// templates/NOTES.txt: what was installed and the next steps, printed by helm after install/upgrade.
import { CHART_NAME } from '../../constructs';

export function notesTxt(header: string): string {
  const c = CHART_NAME;
  return `{{- /* ${header.replace(/^# /, '').trim()} */ -}}
{{ .Chart.Name }} {{ .Chart.Version }} is installed as release "{{ .Release.Name }}" in namespace "{{ .Release.Namespace }}".

Operator:  deployment/{{ include "${c}.fullname" . }}-operator ({{ .Values.operator.replicas }} replica(s))
Webhooks:  validatingwebhookconfiguration/{{ include "${c}.fullname" . }}-validating, mutatingwebhookconfiguration/{{ include "${c}.fullname" . }}-mutating
Certificates: {{ .Values.webhook.certificates.mode }}{{ if eq .Values.webhook.certificates.mode "self-managed" }} (the operator writes Secret {{ .Release.Name }}-webhook-server-cert and injects the CA){{ end }}
{{- if not .Values.platform.baseDomain }}

WARNING: platform.baseDomain is empty, so the operator cannot publish models: each LLMModel and
PassthroughModel reports Ready=False (reason OperatorNotConfigured). The webhooks work. Set it with
  helm upgrade {{ .Release.Name }} <chart> -n {{ .Release.Namespace }} --reuse-values --set platform.baseDomain=example.com
{{- else }}
{{- $domain := .Values.platform.baseDomain | lower | trimSuffix "." }}
Endpoints: external https://{{ .Values.platform.external.hostname | lower | trimSuffix "." | default (printf "llm.%s" $domain) }} (API keys), internal https://{{ .Values.platform.internal.hostname | lower | trimSuffix "." | default (printf "llm-internal.%s" $domain) }} (OIDC)
{{- end }}
{{- $ext := .Values.platform.external }}
{{- $int := .Values.platform.internal }}
{{- if and (eq $ext.gatewayName $int.gatewayName) (eq $ext.gatewayNamespace $int.gatewayNamespace) }}

WARNING: platform.external and platform.internal attach to the same Gateway ({{ $ext.gatewayNamespace }}/{{ $ext.gatewayName }}).
Where one Envoy listener serves both endpoints (one Gateway listener, or listeners on the same port), Envoy AI
Gateway 1.1.0 adds every endpoint picker to that listener twice, so it runs twice per request; one certificate
for both host names makes Envoy Gateway report OverlappingTLSConfig and serve those clients HTTP/1.1 only.
Put the internal endpoint on a Gateway of its own, with its own certificate (set platform.internal.gatewayName;
see docs/compatibility-gateway.md in the chart's repository).
{{- end }}
{{- if not .Values.webhook.agentDeployment.enabled }}

AgentDeployment admission routes are OFF (guarded upgrade in progress?). Finish with: nls upgrade --resume-from activate
{{- end }}
{{- if .Values.webhook.upgradeGuard.enabled }}

The AgentDeployment upgrade guard is ON: AgentDeployment CREATE/UPDATE are denied until it is removed.
{{- end }}

Models (LLMModel, PassthroughModel) are admitted only in namespace "{{ .Release.Namespace }}".

Helm installs crds/ only on first install and never upgrades them. Before every upgrade run
  nls crds apply --chart oci://<registry>/${c} --version <version>
(server-side apply of the new CRDs), then helm upgrade.

Check the installation with: nls verify --namespace {{ .Release.Namespace }}
`;
}
