package lab;

import java.util.Properties;

import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;

/**
 * The lab job's exactly-once Kafka sink (the kafka-sink scenarios): each checkpoint's records go out in one Kafka
 * transaction, committed when the checkpoint completes. A class of its own so that the job's other runs, without the
 * connector on the class path, never load it.
 */
final class KafkaOut {
  private KafkaOut() {}

  static Sink<String> sink(String servers, String topic, String prefix, long transactionTimeoutMs) {
    Properties props = new Properties();
    props.setProperty("transaction.timeout.ms", Long.toString(transactionTimeoutMs));
    return KafkaSink.<String>builder()
        .setBootstrapServers(servers)
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix(prefix)
        .setKafkaProducerConfig(props)
        .setRecordSerializer(
            KafkaRecordSerializationSchema.builder()
                .setTopic(topic)
                .setValueSerializationSchema(new SimpleStringSchema())
                .build())
        .build();
  }
}
