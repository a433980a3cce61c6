"""Adapters: one outside client each (orjson codec, Kafka, Redis, Slack, files), above the pure core."""
