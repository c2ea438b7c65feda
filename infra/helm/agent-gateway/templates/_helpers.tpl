{{/* Names and labels. */}}
{{- define "agent-gateway.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "agent-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component; call with (dict "root" $ "component" "proxy"). */}}
{{- define "agent-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "agent-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "agent-gateway.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Image of one component: <repository>/<component>:<tag>, or the component's own image. */}}
{{- define "agent-gateway.image" -}}
{{- $img := .values.image | default dict -}}
{{- $repo := $img.repository | default (printf "%s/%s" .root.Values.image.repository .component) -}}
{{- $tag := $img.tag | default .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{/* The grace period must cover the preStop pause plus the process's own drain budget. */}}
{{- define "agent-gateway.checkShutdown" -}}
{{- $s := .Values.shutdown -}}
{{- $need := add (div $s.shutdownTimeoutMs 1000) $s.preStopSleepSeconds -}}
{{- if le (int $s.terminationGracePeriodSeconds) (int $need) -}}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%v) must exceed preStopSleepSeconds + shutdownTimeoutMs/1000 (%v)" $s.terminationGracePeriodSeconds $need) -}}
{{- end -}}
{{- end -}}

{{/*
Deployment of one component; call with
(dict "root" $ "component" "proxy" "values" .Values.proxy "serviceName" "gw-proxy").
*/}}
{{- define "agent-gateway.deployment" -}}
{{- $root := .root -}}
{{- $v := .values -}}
{{- include "agent-gateway.checkShutdown" $root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "agent-gateway.fullname" $root }}-{{ .component }}
  labels:
    {{- include "agent-gateway.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  {{- /* An autoscaler (the CPU HPA, or KEDA's for the worker) owns the replica count. */}}
  {{- if not (or $v.autoscaling.enabled (dig "keda" "enabled" false $v)) }}
  replicas: {{ $v.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  selector:
    matchLabels:
      {{- include "agent-gateway.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "agent-gateway.selectorLabels" . | nindent 8 }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- with $root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "agent-gateway.serviceAccountName" $root }}
      automountServiceAccountToken: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ $root.Values.shutdown.terminationGracePeriodSeconds }}
      containers:
        - name: {{ .component }}
          image: {{ include "agent-gateway.image" . | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: {{ $v.port }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "agent-gateway.fullname" $root }}
          env:
            - name: PORT
              value: {{ $v.port | quote }}
            - name: OTEL_SERVICE_NAME
              value: {{ .serviceName | quote }}
            - name: GW_SHUTDOWN_TIMEOUT_MS
              value: {{ $root.Values.shutdown.shutdownTimeoutMs | int | quote }}
            {{- range $name, $key := $root.Values.secretKeys }}
            - name: {{ $name }}
              valueFrom:
                secretKeyRef:
                  name: {{ $root.Values.existingSecret }}
                  key: {{ $key }}
            {{- end }}
            {{- range $name, $key := $root.Values.extraSecretEnv }}
            - name: {{ $name }}
              valueFrom:
                secretKeyRef:
                  name: {{ $root.Values.existingSecret }}
                  key: {{ $key }}
            {{- end }}
            {{- range $name, $value := $v.env }}
            - name: {{ $name }}
              value: {{ $value | quote }}
            {{- end }}
          startupProbe:
            httpGet: { path: {{ $root.Values.probes.path }}, port: http }
            {{- toYaml $root.Values.probes.startup | nindent 12 }}
          readinessProbe:
            httpGet: { path: {{ $root.Values.probes.path }}, port: http }
            {{- toYaml $root.Values.probes.readiness | nindent 12 }}
          livenessProbe:
            httpGet: { path: {{ $root.Values.probes.path }}, port: http }
            {{- toYaml $root.Values.probes.liveness | nindent 12 }}
          lifecycle:
            # Let endpoint removal reach the ingress before SIGTERM stops accepting connections.
            preStop:
              exec:
                command: ["sleep", {{ $root.Values.shutdown.preStopSleepSeconds | quote }}]
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}

{{- define "agent-gateway.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "agent-gateway.fullname" .root }}-{{ .component }}
  labels:
    {{- include "agent-gateway.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  type: ClusterIP
  selector:
    {{- include "agent-gateway.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ .values.port }}
      targetPort: http
      protocol: TCP
{{- end -}}

{{- define "agent-gateway.hpa" -}}
{{- if .values.autoscaling.enabled }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "agent-gateway.fullname" .root }}-{{ .component }}
  labels:
    {{- include "agent-gateway.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "agent-gateway.fullname" .root }}-{{ .component }}
  minReplicas: {{ .values.autoscaling.minReplicas }}
  maxReplicas: {{ .values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ .values.autoscaling.targetCPUUtilizationPercentage }}
  behavior:
    # Scale down slowly: a proxy pod may be holding long SSE streams.
    scaleDown:
      stabilizationWindowSeconds: 300
{{- end }}
{{- end -}}

{{- define "agent-gateway.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "agent-gateway.fullname" .root }}-{{ .component }}
  labels:
    {{- include "agent-gateway.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  maxUnavailable: {{ .values.pdb.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "agent-gateway.selectorLabels" . | nindent 6 }}
{{- end -}}
