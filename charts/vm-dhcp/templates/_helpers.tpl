{{/*
Names. Kubernetes names and label values are at most 63 characters: the release's full name
is cut there, and a name with a suffix cuts the full name short enough to keep the suffix
whole (a 60-character release name gives "<first 51>-controller", never two objects of one
kind with the same name).
*/}}
{{- define "vm-dhcp.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vm-dhcp.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "vm-dhcp.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<suffix>" within 63 characters: (dict "ctx" . "suffix" "controller") */}}
{{- define "vm-dhcp.suffixed" -}}
{{- $max := sub 62 (len .suffix) | int -}}
{{- printf "%s-%s" (include "vm-dhcp.fullname" .ctx | trunc $max | trimSuffix "-") .suffix -}}
{{- end -}}

{{- define "vm-dhcp.controllerName" -}}
{{- include "vm-dhcp.suffixed" (dict "ctx" . "suffix" "controller") -}}
{{- end -}}

{{- define "vm-dhcp.agentName" -}}
{{- include "vm-dhcp.suffixed" (dict "ctx" . "suffix" "agent") -}}
{{- end -}}

{{- define "vm-dhcp.metricsName" -}}
{{- include "vm-dhcp.suffixed" (dict "ctx" . "suffix" "metrics") -}}
{{- end -}}

{{/*
Admission (templates/webhook.yaml): the Service the API server calls, the Secret the program
keeps its CA and serving certificate in, and the name of both webhook configurations. Not
"<fullname>-webhook-tls": the Go project's webhook (harvester/webhook, its --name
"<fullname>-webhook") makes the Secrets "<fullname>-webhook-ca" and "<fullname>-webhook-tls" at
run time, which outlive its helm uninstall; with Harvester's release name and namespace the
same name would make our install fail (a Secret helm does not own).
*/}}
{{- define "vm-dhcp.webhookName" -}}
{{- include "vm-dhcp.suffixed" (dict "ctx" . "suffix" "webhook") -}}
{{- end -}}

{{- define "vm-dhcp.webhookSecret" -}}
{{- include "vm-dhcp.suffixed" (dict "ctx" . "suffix" "admission-tls") -}}
{{- end -}}

{{- define "vm-dhcp.admissionName" -}}
{{- include "vm-dhcp.suffixed" (dict "ctx" . "suffix" "admission") -}}
{{- end -}}

{{/* The post-delete hook's Job, ServiceAccount and RBAC (templates/uninstall.yaml). */}}
{{- define "vm-dhcp.uninstallName" -}}
{{- include "vm-dhcp.suffixed" (dict "ctx" . "suffix" "uninstall") -}}
{{- end -}}

{{/*
Service accounts: serviceAccount.name (the Go project's key) or serviceAccount.controller for
the controller; serviceAccount.agent, else <serviceAccount.name>-agent, for the agents; else
derived names, or "default" when serviceAccount.create is false (as the Go project's chart).
*/}}
{{- define "vm-dhcp.controllerServiceAccount" -}}
{{- $derived := ternary (include "vm-dhcp.controllerName" .) "default" (ne .Values.serviceAccount.create false) -}}
{{- .Values.serviceAccount.name | default .Values.serviceAccount.controller | default $derived -}}
{{- end -}}

{{- define "vm-dhcp.agentServiceAccount" -}}
{{- $derived := ternary (include "vm-dhcp.agentName" .) "default" (ne .Values.serviceAccount.create false) -}}
{{- if .Values.serviceAccount.name -}}
{{- $derived = printf "%s-agent" .Values.serviceAccount.name -}}
{{- end -}}
{{- .Values.serviceAccount.agent | default $derived -}}
{{- end -}}

{{/*
The Go project's values keys (values.yaml, its last section): an alias that is set (and, for
maps and lists, not empty) wins over our key.
*/}}
{{- define "vm-dhcp.controllerReplicas" -}}
{{- if kindIs "invalid" .Values.replicaCount -}}
{{- .Values.controller.replicas -}}
{{- else -}}
{{- .Values.replicaCount -}}
{{- end -}}
{{- end -}}

{{/* The controller's image keys: image.* (the Go project's) over controller.image.*. */}}
{{- define "vm-dhcp.controllerImageValues" -}}
{{- $up := .Values.image | default dict -}}
{{- $c := .Values.controller.image -}}
{{- dict "repository" ($up.repository | default $c.repository) "tag" ($up.tag | default $c.tag) "digest" $c.digest "pullPolicy" ($up.pullPolicy | default $c.pullPolicy) | toJson -}}
{{- end -}}

{{/* The metrics Service's port: service.metricsPort (the Go project's) over ours. */}}
{{- define "vm-dhcp.metricsPort" -}}
{{- if kindIs "invalid" .Values.service.metricsPort -}}
{{- .Values.metrics.service.port -}}
{{- else -}}
{{- .Values.service.metricsPort -}}
{{- end -}}
{{- end -}}

{{- define "vm-dhcp.labels" -}}
app.kubernetes.io/name: {{ include "vm-dhcp.name" . }}
app.kubernetes.io/instance: {{ .Release.Name | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "vm-dhcp.selector" -}}
app.kubernetes.io/name: {{ include "vm-dhcp.name" . }}
app.kubernetes.io/instance: {{ .Release.Name | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/component: controller
{{- end -}}

{{/* repository@digest when a digest is set, else repository:tag (tag defaults to appVersion). */}}
{{- define "vm-dhcp.image" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (.image.tag | default .ctx.Chart.AppVersion | toString) -}}
{{- end -}}
{{- end -}}

{{- define "vm-dhcp.controllerImage" -}}
{{- include "vm-dhcp.image" (dict "ctx" . "image" (include "vm-dhcp.controllerImageValues" . | fromJson)) -}}
{{- end -}}

{{- define "vm-dhcp.agentImage" -}}
{{- include "vm-dhcp.image" (dict "ctx" . "image" .Values.agent.image) -}}
{{- end -}}

{{/* policy/v1 PodDisruptionBudget from Kubernetes 1.21, policy/v1beta1 before (1.20). */}}
{{- define "vm-dhcp.pdbApiVersion" -}}
{{- if .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" -}}
policy/v1
{{- else -}}
policy/v1beta1
{{- end -}}
{{- end -}}

{{/*
Taking over from harvester/vm-dhcp-controller (controller/migrate.c). The namespace of its agent
pods ("" when none is watched), and its webhook configurations' names, comma-separated: by
default "<fullname>-webhook", its chart's fullname computed as its chart does
(upstream:chart/templates/_helpers.tpl, chart name harvester-vm-dhcp-controller) and its
webhook's --name (upstream:chart/templates/deployment.yaml).
*/}}
{{- define "vm-dhcp.upstreamAgentNamespace" -}}
{{- $ns := .Values.migration.upstreamAgentNamespace | default .Release.Namespace -}}
{{- if ne $ns "-" }}{{ $ns }}{{ end -}}
{{- end -}}

{{- define "vm-dhcp.upstreamWebhookConfigurations" -}}
{{- if .Values.migration.upstreamWebhookConfigurations -}}
{{- join "," .Values.migration.upstreamWebhookConfigurations -}}
{{- else -}}
{{- $name := .Values.nameOverride | default "harvester-vm-dhcp-controller" -}}
{{- $full := printf "%s-%s" .Release.Name $name -}}
{{- if .Values.fullnameOverride -}}
{{- $full = .Values.fullnameOverride -}}
{{- else if contains $name .Release.Name -}}
{{- $full = .Release.Name -}}
{{- end -}}
{{- printf "%s-webhook" ($full | trunc 63 | trimSuffix "-") -}}
{{- end -}}
{{- end -}}
