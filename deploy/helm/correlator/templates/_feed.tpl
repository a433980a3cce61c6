{{/*
The Slack bot and the alert forwarder: one replica each (Recreate: one writer per incident), /healthz and /metrics on
metricsPort. Ready while the feed polls Kafka; liveness only asks that the process answers, since an outage of Slack,
Redis or an alert target is waited out with backoff and a restart would not end it.
Call with (dict "root" $ "component" "slack" "values" .Values.slack "keys" (dict "NAME" optional ...)).
*/}}
{{- define "correlator.feed" -}}
{{- $root := .root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "correlator.fullname" $root }}-{{ .component }}
  labels:
    {{- include "correlator.labels" (dict "root" $root "component" .component) | nindent 4 }}
spec:
  replicas: 1
  strategy:
    type: Recreate
  selector:
    matchLabels:
      {{- include "correlator.selectorLabels" (dict "root" $root "component" .component) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "correlator.labels" (dict "root" $root "component" .component) | nindent 8 }}
      annotations:
        {{- include "correlator.podAnnotations" (dict "root" $root "port" $root.Values.metricsPort) | nindent 8 }}
    spec:
      terminationGracePeriodSeconds: 30
      {{- include "correlator.podCommon" $root | nindent 6 }}
      {{- with include "correlator.scheduling" .values }}{{ . | trim | nindent 6 }}{{ end }}
      containers:
        - name: {{ .component }}
          image: {{ include "correlator.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .component | quote }}]
          envFrom:
            - configMapRef:
                name: {{ include "correlator.fullname" $root }}-config
          env:
            {{- include "correlator.secretEnv" (dict "root" $root "keys" .keys) | trim | nindent 12 }}
          ports:
            - name: metrics
              containerPort: {{ $root.Values.metricsPort }}
          readinessProbe:
            httpGet:
              path: /healthz
              port: metrics
            periodSeconds: 10
            failureThreshold: 3
          livenessProbe:
            tcpSocket:
              port: metrics
            initialDelaySeconds: 20
            periodSeconds: 20
            failureThreshold: 6
          resources:
            {{- toYaml .values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
{{- end -}}
