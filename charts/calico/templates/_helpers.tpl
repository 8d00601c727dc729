{{/* The image reference of one component: images.<name> with the registry and tag. */}}
{{- define "calico.image" -}}
{{- $img := index .root.Values.images .name -}}
{{- $tag := .root.Values.images.tag | default .root.Chart.AppVersion -}}
{{- if .root.Values.images.registry -}}{{ .root.Values.images.registry }}/{{- end -}}{{ $img }}:{{ $tag }}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "calico.labels" -}}
app.kubernetes.io/part-of: calico
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* Typha runs in front of the kubernetes datastore only, as in Calico's manifests. */}}
{{- define "calico.typhaEnabled" -}}
{{- if eq .Values.datastore "kubernetes" -}}true{{- end -}}
{{- end -}}

{{/* Typha's replicas: the value, else Calico's formula max(3, ceil(nodes / 200)). */}}
{{- define "calico.typhaReplicas" -}}
{{- if kindIs "invalid" .Values.typha.replicas -}}
{{- $n := int .Values.typha.expectedNodes -}}
{{- max 3 (div (add $n 199) 200) -}}
{{- else -}}
{{- .Values.typha.replicas -}}
{{- end -}}
{{- end -}}

{{/* The datastore variables every component reads (libcalico's DatastoreProperties). */}}
{{- define "calico.datastoreEnv" -}}
{{- if eq .Values.datastore "kubernetes" }}
- name: DATASTORE_TYPE
  value: kubernetes
{{- else }}
- name: DATASTORE_TYPE
  value: etcdv3
- name: ETCD_ENDPOINTS
  value: {{ join "," .Values.etcd.endpoints | quote }}
{{- if .Values.etcd.tlsSecret }}
- name: ETCD_CA_CERT_FILE
  value: /calico-secrets/etcd-ca
- name: ETCD_CERT_FILE
  value: /calico-secrets/etcd-cert
- name: ETCD_KEY_FILE
  value: /calico-secrets/etcd-key
{{- end }}
{{- end }}
{{- end -}}

{{/* The etcd TLS volume mount and volume, when there is one. */}}
{{- define "calico.etcdMount" -}}
{{- if and (eq .Values.datastore "etcd") .Values.etcd.tlsSecret }}
- name: etcd-certs
  mountPath: /calico-secrets
  readOnly: true
{{- end }}
{{- end -}}
{{- define "calico.etcdVolume" -}}
{{- if and (eq .Values.datastore "etcd") .Values.etcd.tlsSecret }}
- name: etcd-certs
  secret:
    secretName: {{ .Values.etcd.tlsSecret }}
    defaultMode: 0400
{{- end }}
{{- end -}}

{{/* httpGet probes on a component's health port: /liveness and /readiness. The startup probe
     gives a JVM on a slow or busy node up to 5 minutes before liveness counts (on a real kubelet
     at load 20-30 no JVM answered within the liveness probe's 70 s, and all restarted forever). */}}
{{- define "calico.probes" -}}
startupProbe:
  httpGet:
    {{- if .host }}
    host: {{ .host }}
    {{- end }}
    path: /liveness
    port: {{ .port }}
  periodSeconds: 10
  failureThreshold: 30
  timeoutSeconds: 10
livenessProbe:
  httpGet:
    {{- if .host }}
    host: {{ .host }}
    {{- end }}
    path: /liveness
    port: {{ .port }}
  periodSeconds: 10
  initialDelaySeconds: 10
  failureThreshold: 6
  timeoutSeconds: 10
readinessProbe:
  httpGet:
    {{- if .host }}
    host: {{ .host }}
    {{- end }}
    path: /readiness
    port: {{ .port }}
  periodSeconds: 10
  timeoutSeconds: 10
{{- end -}}

{{/* Prometheus scrape annotations for a pod: the port and path of its metrics. */}}
{{- define "calico.scrape" -}}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .port | quote }}
prometheus.io/path: {{ .path | default "/actuator/prometheus" }}
{{- end -}}

{{/* Containers drop every capability unless they need one. */}}
{{- define "calico.restricted" -}}
securityContext:
  allowPrivilegeEscalation: false
  runAsNonRoot: true
  runAsUser: 10001
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/* logSeverity as Spring's and the CNI plugin's lower-case levels (Warning: Spring says warn). */}}
{{- define "calico.logLevel" -}}
{{- .Values.logSeverity | lower -}}
{{- end -}}
{{- define "calico.springLogLevel" -}}
{{- .Values.logSeverity | lower | replace "warning" "warn" -}}
{{- end -}}

{{/* tls.enabled: a component's certificate Secret (templates/tls.yaml) mounted at /<name>. */}}
{{- define "calico.tlsMount" -}}
{{- if .root.Values.tls.enabled }}
- name: {{ .name }}
  mountPath: /{{ .name }}
  readOnly: true
{{- end }}
{{- end -}}
{{- define "calico.tlsVolume" -}}
{{- if .root.Values.tls.enabled }}
- name: {{ .name }}
  secret:
    secretName: {{ .name }}
{{- end }}
{{- end -}}

{{/* tls.enabled: felix's and confd's client certificate, for typha and (felix) goldmane. */}}
{{- define "calico.typhaClientTlsEnv" -}}
{{- if .Values.tls.enabled }}
- name: FELIX_TYPHACAFILE
  value: /calico-node-tls/ca.crt
- name: FELIX_TYPHACERTFILE
  value: /calico-node-tls/tls.crt
- name: FELIX_TYPHAKEYFILE
  value: /calico-node-tls/tls.key
- name: FELIX_TYPHACN
  value: typha-server
{{- end }}
{{- end -}}
