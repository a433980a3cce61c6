"""Shipper envelopes: the same log lines as Filebeat and Vector would put them on the wire (one JSON object a line).

Multi-line records travel as one event (Filebeat's and Vector's multiline settings join them), as the shippers'
shipped configurations do.
"""

from __future__ import annotations

import json
from pathlib import Path

from correlator.simulate.cluster import Cluster
from correlator.simulate.render import iso_with_offset
from correlator.simulate.traffic import Traffic

LOG_DIRS = {"flink": "/opt/flink/log/", "hadoop": "/var/log/hadoop-hdfs/"}


def to_envelopes(cluster: Cluster, out: Path) -> list[Path]:
    Traffic(cluster).run()
    hosts = {n.file: n.host for n in (cluster.jm_node, cluster.tm_node, cluster.nn_node, *cluster.dn_nodes.values())}
    flink_rows: list[tuple[int, int, str]] = []
    hdfs_rows: list[tuple[int, int, str]] = []
    for file, rows in sorted(cluster.logs.lines.items()):
        host = hosts.get(file, "unknown")
        offset = 0
        for ts, seq, text in sorted(rows):
            stamp = iso_with_offset(ts).replace("+0000", "Z")
            if file.startswith("flink-"):
                doc = {"@timestamp": stamp, "message": text, "host": {"name": host},
                       "log": {"file": {"path": LOG_DIRS["flink"] + file}, "offset": offset}}
                flink_rows.append((ts, seq, json.dumps(doc, separators=(",", ":"))))
            else:
                doc = {"timestamp": stamp, "message": text, "host": host, "file": LOG_DIRS["hadoop"] + file,
                       "source_type": "file"}
                hdfs_rows.append((ts, seq, json.dumps(doc, separators=(",", ":"))))
            offset += len(text.encode("utf-8")) + 1
    written = []
    for name, rows in (("filebeat-flink.ndjson", flink_rows), ("vector-hdfs.ndjson", hdfs_rows)):
        path = out / name
        path.write_text("".join(r[2] + "\n" for r in sorted(rows)), encoding="utf-8")
        written.append(path)
    return written
