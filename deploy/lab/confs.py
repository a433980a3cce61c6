"""The daemons' configuration files as the lab writes them: Hadoop XML, and the stock log4j files of Hadoop and Flink
(Flink's optionally with log4j2's JSON template layout in its ECS template instead of the stock pattern)."""

from __future__ import annotations


def xml(props: dict[str, object]) -> str:
    body = "".join(f"  <property><name>{k}</name><value>{v}</value></property>\n" for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


# Hadoop's stock log4j.properties, reduced to the file appender a daemon uses (RFA), its stock layout, clienttrace at
# INFO as shipped, and the audit log kept out of the daemon log as the stock NullAppender default does.
HADOOP_LOG4J = """\
hadoop.root.logger=INFO,console
hadoop.log.dir=.
hadoop.log.file=hadoop.log
log4j.rootLogger=${hadoop.root.logger}
log4j.threshold=ALL
log4j.appender.NullAppender=org.apache.log4j.varia.NullAppender
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n
log4j.appender.RFA=org.apache.log4j.RollingFileAppender
log4j.appender.RFA.File=${hadoop.log.dir}/${hadoop.log.file}
log4j.appender.RFA.MaxFileSize=256MB
log4j.appender.RFA.MaxBackupIndex=20
log4j.appender.RFA.layout=org.apache.log4j.PatternLayout
log4j.appender.RFA.layout.ConversionPattern=%d{ISO8601} %p %c: %m%n
hdfs.audit.logger=INFO,NullAppender
log4j.logger.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit=${hdfs.audit.logger}
log4j.additivity.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit=false
log4j.logger.org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace=INFO
"""

# Flink's stock conf/log4j.properties (file appender, stock layout); org.apache.hadoop at INFO instead of the stock
# WARN so the HDFS client's own pipeline lines (createBlockOutputStream, Abandoning, Excluding) are in the logs.
FLINK_LOG4J = """\
monitorInterval=30
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
logger.pekko.name = org.apache.pekko
logger.pekko.level = INFO
logger.akka.name = akka
logger.akka.level = INFO
logger.kafka.name = org.apache.kafka
logger.kafka.level = INFO
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = INFO
logger.zookeeper.name = org.apache.zookeeper
logger.zookeeper.level = INFO
logger.shaded_zookeeper.name = org.apache.flink.shaded.zookeeper3
logger.shaded_zookeeper.level = INFO
appender.main.name = MainAppender
appender.main.type = RollingFile
appender.main.append = true
appender.main.fileName = ${sys:log.file}
appender.main.filePattern = ${sys:log.file}.%i
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
appender.main.policies.type = Policies
appender.main.policies.size.type = SizeBasedTriggeringPolicy
appender.main.policies.size.size = 100MB
appender.main.policies.startup.type = OnStartupTriggeringPolicy
appender.main.strategy.type = DefaultRolloverStrategy
appender.main.strategy.max = ${env:MAX_LOG_FILE_NUMBER:-10}
logger.netty.name = org.jboss.netty.channel.DefaultChannelPipeline
logger.netty.level = OFF
"""

# Flink's stock conf/log4j-cli.properties (what bin/flink logs through).
FLINK_CLI_LOG4J = """\
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FileAppender
appender.file.name = FileAppender
appender.file.type = FILE
appender.file.append = false
appender.file.fileName = ${sys:log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = WARN
"""

FLINK_LAYOUTS = ("text", "json")
STOCK_PATTERN = "%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n"


def _json_layout(props: str, appender: str) -> str:
    """`props` with `appender`'s stock PatternLayout swapped for log4j2's JsonTemplateLayout and its bundled ECS
    template: one JSON object per line (`@timestamp`, `log.level`, `message`, `log.logger`, `process.thread.name`;
    a thrown exception in `error.type`, `error.message` and `error.stack_trace`)."""
    stock = (f"appender.{appender}.layout.type = PatternLayout\n"
             f"appender.{appender}.layout.pattern = {STOCK_PATTERN}\n")
    if stock not in props:
        raise ValueError(f"no stock PatternLayout on appender {appender!r}")
    return props.replace(stock, f"appender.{appender}.layout.type = JsonTemplateLayout\n"
                                f"appender.{appender}.layout.eventTemplateUri = classpath:EcsLayout.json\n")


def flink_log4j(layout: str = "text") -> str:
    """The JobManager's and TaskManager's log4j.properties in `layout` (one of FLINK_LAYOUTS)."""
    return FLINK_LOG4J if layout == "text" else _json_layout(FLINK_LOG4J, "main")


def flink_cli_log4j(layout: str = "text") -> str:
    """The client's log4j-cli.properties in `layout` (one of FLINK_LAYOUTS)."""
    return FLINK_CLI_LOG4J if layout == "text" else _json_layout(FLINK_CLI_LOG4J, "file")
