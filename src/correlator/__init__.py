"""correlator: explains failed Flink checkpoints from the HDFS and JVM logs around them."""

__version__ = "0.1.0"
