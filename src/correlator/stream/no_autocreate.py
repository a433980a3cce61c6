"""aiokafka (Faust's client) asks for topic auto-creation in every metadata request and has no setting to stop it.

After a broker lost its data, that request silently recreates our topics with the broker's default partition
count and the worker waits on them forever. Importing this module makes aiokafka's metadata requests ask for no
auto-creation, like ``allow.auto.create.topics=false`` does for librdkafka; Faust still creates its own changelog
topics explicitly.
"""

from __future__ import annotations

from typing import Any

import aiokafka.client
from aiokafka.protocol.metadata import MetadataRequest


class _NoAutoCreate(MetadataRequest):  # type: ignore[misc]  # aiokafka ships no types: its base is Any
    def __init__(self, topics: list[str] | None = None, allow_auto_topic_creation: bool | None = False,
                 **kwargs: Any) -> None:
        super().__init__(topics, False if allow_auto_topic_creation is None else allow_auto_topic_creation, **kwargs)


aiokafka.client.MetadataRequest = _NoAutoCreate
