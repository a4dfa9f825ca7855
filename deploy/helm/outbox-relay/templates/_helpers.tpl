{{/* Names and labels. */}}
{{- define "outbox-relay.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "outbox-relay.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "outbox-relay.selectorLabels" -}}
app.kubernetes.io/name: {{ include "outbox-relay.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "outbox-relay.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "outbox-relay.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "outbox-relay.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "outbox-relay.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The relay's config file: .Values.config with http.listen set from http.port. Rendering fails on a secret written
as a literal (see outbox-relay.refuseLiteralSecrets).
*/}}
{{- define "outbox-relay.config" -}}
{{- include "outbox-relay.refuseLiteralSecrets" (list "config" .Values.config) -}}
{{- $http := dict "listen" (printf "0.0.0.0:%v" .Values.http.port) -}}
{{- $config := deepCopy .Values.config -}}
{{- if hasKey $config "http" -}}
{{- fail "config.http: set by the chart; use http.port" -}}
{{- end -}}
{{- $_ := set $config "http" $http -}}
{{- toYaml $config -}}
{{- end -}}

{{/*
Walks the config and fails on a key that holds a secret (password, secret, token, credentials, a private key,
sasl.oauthbearer.config, sasl.jaas.config) with a literal value, and on a conninfo with a literal password=: such
values would land in a ConfigMap. A reference (${file:...} or ${env:...}) is what is allowed.
*/}}
{{- define "outbox-relay.refuseLiteralSecrets" -}}
{{- $path := index . 0 -}}
{{- $value := index . 1 -}}
{{- if kindIs "map" $value -}}
{{- range $k, $v := $value -}}
{{- include "outbox-relay.refuseLiteralSecrets" (list (printf "%s.%s" $path $k) $v) -}}
{{- end -}}
{{- else if kindIs "slice" $value -}}
{{- range $i, $v := $value -}}
{{- include "outbox-relay.refuseLiteralSecrets" (list (printf "%s.%d" $path $i) $v) -}}
{{- end -}}
{{- else if kindIs "string" $value -}}
{{- $reference := "^[$][{](env|file):[^}]+[}]$" -}}
{{- if and (regexMatch "(?i)(password|secret|token|credentials|[.]key|key[.]pem|oauthbearer[.]config|jaas[.]config)$" $path) (ne $value "") (not (regexMatch $reference $value)) -}}
{{- fail (printf "%s: a secret must not be written into the chart's values (it would be rendered into a ConfigMap): use ${file:/etc/outbox-relay/secrets/<name>/<key>} with secretMounts, or ${env:NAME} with env" $path) -}}
{{- end -}}
{{- if and (regexMatch "conninfo$" $path) (regexMatch "password=[^$]" $value) -}}
{{- fail (printf "%s: the conninfo's password must not be written into the chart's values (it would be rendered into a ConfigMap): password=${file:...} or ${env:...}" $path) -}}
{{- end -}}
{{- end -}}
{{- end -}}
