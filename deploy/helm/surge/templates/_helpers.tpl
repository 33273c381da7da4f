{{/* Names: RELEASE-engine and RELEASE-router (release "surge" gives deploy/kubernetes' names). */}}
{{- define "surge.engineName" -}}{{ printf "%s-engine" .Release.Name | trunc 63 | trimSuffix "-" }}{{- end }}
{{- define "surge.routerName" -}}{{ printf "%s-router" .Release.Name | trunc 63 | trimSuffix "-" }}{{- end }}

{{/* The standard app.kubernetes.io/* labels; "component" is engine or router. */}}
{{- define "surge.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: surge
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/* What selects a component's pods (stable across upgrades: no version). */}}
{{- define "surge.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "surge.image" -}}{{ printf "%s:%s" .Values.image.repository (toString .Values.image.tag) }}{{- end }}

{{/* Seconds as the policy file writes durations: "30s", "5m". */}}
{{- define "surge.duration" -}}
{{- $s := int . -}}
{{- if and (gt $s 0) (eq (mod $s 60) 0) }}{{ div $s 60 }}m{{ else }}{{ $s }}s{{ end -}}
{{- end }}

{{/* The router's policy file (autoscale/README.md) from the autoscaling values; pool "default",
     the pool Kubernetes-discovered engines form. */}}
{{- define "surge.policy" -}}
{{- $a := .Values.autoscaling -}}
{{- $rules := list -}}
{{- range $a.schedule }}
{{- $rules = append $rules (dict "name" .name "cron" .cron "min_replicas" .minReplicas) -}}
{{- end -}}
{{- $pool := dict "min_replicas" $a.minReplicas "max_replicas" $a.maxReplicas
      "targets" (dict "queue_depth_per_replica" $a.queueDepthPerReplica
                      "busy_fraction" (divf $a.busyPercent 100)
                      "ttft_p95" (printf "%dms" (int (mulf $a.ttftP95Seconds 1000))))
      "scale_up" (dict "stabilization" (include "surge.duration" $a.scaleUpStabilizationSeconds))
      "scale_down" (dict "stabilization" (include "surge.duration" $a.scaleDownStabilizationSeconds)
                         "max_percent" $a.scaleDownMaxPercent) -}}
{{- if $rules }}{{- $_ := set $pool "schedule" (dict "time_zone" $a.timeZone "rules" $rules) -}}{{- end -}}
{{- dict "interval" "15s" "pools" (dict "default" $pool) | toPrettyJson -}}
{{- end }}
