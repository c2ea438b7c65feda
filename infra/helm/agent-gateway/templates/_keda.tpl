{{- /*
The worker's autoscaler on backlog: a KEDA ScaledObject whose redis trigger watches the length of
BullMQ's wait list (`<prefix>:<queue>:wait`, the jobs no worker has taken yet). KEDA creates and
owns the HPA, so the CPU HPA is not rendered for the worker when this is on. The Redis address and
password come from a Secret through a TriggerAuthentication: KEDA wants host:port, not the
REDIS_URL the services read.
*/}}
{{- define "agent-gateway.workerScaledObject" -}}
{{- $root := .root -}}
{{- $k := .values.keda -}}
{{- $name := printf "%s-%s" (include "agent-gateway.fullname" $root) .component -}}
{{- if lt (int $k.minReplicaCount) 1 }}
{{- fail "worker.keda.minReplicaCount must be at least 1: the worker also runs the reconciler and the sweeper" }}
{{- end }}
{{- if not $k.redis.secretName }}
{{- fail "worker.keda.redis.secretName is required when worker.keda.enabled" }}
{{- end }}
apiVersion: keda.sh/v1alpha1
kind: TriggerAuthentication
metadata:
  name: {{ $name }}-redis
  labels:
    {{- include "agent-gateway.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  secretTargetRef:
    - parameter: address
      name: {{ $k.redis.secretName }}
      key: {{ $k.redis.addressKey }}
    {{- if $k.redis.passwordKey }}
    - parameter: password
      name: {{ $k.redis.secretName }}
      key: {{ $k.redis.passwordKey }}
    {{- end }}
    {{- if $k.redis.usernameKey }}
    - parameter: username
      name: {{ $k.redis.secretName }}
      key: {{ $k.redis.usernameKey }}
    {{- end }}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {{ $name }}
  labels:
    {{- include "agent-gateway.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $name }}
  minReplicaCount: {{ $k.minReplicaCount }}
  maxReplicaCount: {{ $k.maxReplicaCount }}
  pollingInterval: {{ $k.pollingInterval }}
  cooldownPeriod: {{ $k.cooldownPeriod }}
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        # Scale down slowly: a worker that is stopped drains its running jobs first.
        scaleDown:
          stabilizationWindowSeconds: {{ $k.scaleDownStabilizationSeconds }}
  triggers:
    - type: redis
      metadata:
        listName: {{ printf "%s:%s:wait" $k.redis.prefix ($root.Values.config.GW_QUEUE_NAME | default "gw-transact") | quote }}
        listLength: {{ $k.listLength | quote }}
        activationListLength: {{ $k.activationListLength | quote }}
        databaseIndex: {{ $k.redis.databaseIndex | quote }}
        enableTLS: {{ $k.redis.enableTLS | quote }}
      authenticationRef:
        name: {{ $name }}-redis
    {{- if $k.cpuUtilizationPercentage }}
    # The CPU target still applies alongside the backlog: whichever asks for more replicas wins.
    - type: cpu
      metricType: Utilization
      metadata:
        value: {{ $k.cpuUtilizationPercentage | quote }}
    {{- end }}
{{- end -}}
