"""The notifying services beside the worker: verdicts and risks from the verdicts topic (or a file) into Slack,
Alertmanager and the on-call pagers, and feedback clicks from Slack back to Kafka. No domain decision lives here,
and nothing here is part of the worker (``correlator.stream``) or imports it."""
