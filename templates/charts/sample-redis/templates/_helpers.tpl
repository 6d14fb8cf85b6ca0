{{- define "sample-redis.labels" -}}
app.kubernetes.io/name: sample-redis
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}
{{- define "sample-redis.selector" -}}
app.kubernetes.io/name: sample-redis
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
