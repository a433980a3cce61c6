package lab;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Random;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

/**
 * The lab's job: generated numbers, keyed state of a few MB (checkpointing and its timeout come from the cluster's
 * configuration), and an operator whose snapshotState throws while a trigger file exists (the user-code fault).
 * With {@code --grow BYTES} every record also appends that many bytes to its key's list state, so the state grows
 * steadily (the state-growth scenario). While the file {@code --slow PATH} exists, every record takes
 * {@code --slow-ms} ms in the keyed operator: the source outpaces it, the buffers between them fill and a checkpoint's
 * barriers wait behind them (the backpressure scenario). With {@code --kafka SERVERS} the records go to the Kafka
 * topic {@code --kafka-topic} through an exactly-once sink (transactional id prefix {@code --kafka-prefix}, the
 * producer's {@code transaction.timeout.ms} from {@code --transaction-timeout-ms}) instead of being discarded.
 * Compiles unchanged against Flink 1.20 and 2.x.
 *
 * <p>Arguments: {@code --trigger PATH --keys N --payload BYTES --rate PER_SECOND --grow BYTES --slow PATH --slow-ms MS
 * --checkpoint-timeout-ms MS --kafka SERVERS --kafka-topic T --kafka-prefix P --transaction-timeout-ms MS} (a checkpoint
 * timeout given sets the checkpoint timeout in code, as most jobs do).
 */
public final class LabJob {
  private LabJob() {}

  public static void main(String[] args) throws Exception {
    String trigger = arg(args, "--trigger", "/tmp/lab-snapshot-trigger");
    int keys = Integer.parseInt(arg(args, "--keys", "4000"));
    int payload = Integer.parseInt(arg(args, "--payload", "1024"));
    double rate = Double.parseDouble(arg(args, "--rate", "2000"));
    int grow = Integer.parseInt(arg(args, "--grow", "0"));
    String slow = arg(args, "--slow", "/tmp/lab-slow-trigger");
    int slowMs = Integer.parseInt(arg(args, "--slow-ms", "5"));

    long checkpointTimeoutMs = Long.parseLong(arg(args, "--checkpoint-timeout-ms", "0"));
    String kafka = arg(args, "--kafka", "");

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    if (checkpointTimeoutMs > 0) {
      // set in code, as most jobs do: no log line shows it, the REST API's checkpoint configuration does
      env.getCheckpointConfig().setCheckpointTimeout(checkpointTimeoutMs);
    }
    DataGeneratorSource<Long> source =
        new DataGeneratorSource<>(new Numbers(), Long.MAX_VALUE, RateLimiterStrategy.perSecond(rate), Types.LONG);
    DataStream<Long> out =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "generator")
            .map(new SnapshotTrigger(trigger))
            .name("snapshot-trigger")
            .keyBy(new ByKey(keys))
            .process(new StateBuilder(payload, grow, slow, slowMs))
            .name("keyed-state");
    if (kafka.isEmpty()) {
      out.sinkTo(new DiscardingSink<>()).name("discard");
    } else {
      out.map(new AsText())
          .name("as-text")
          .sinkTo(
              KafkaOut.sink(
                  kafka,
                  arg(args, "--kafka-topic", "lab-out"),
                  arg(args, "--kafka-prefix", "lab-eos"),
                  Long.parseLong(arg(args, "--transaction-timeout-ms", "60000"))))
          .name("kafka-sink");
    }
    env.execute("correlator-lab");
  }

  private static String arg(String[] args, String name, String otherwise) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return otherwise;
  }

  static final class AsText implements MapFunction<Long, String> {
    @Override
    public String map(Long value) {
      return Long.toString(value);
    }
  }

  static final class Numbers implements GeneratorFunction<Long, Long> {
    @Override
    public Long map(Long value) {
      return value;
    }
  }

  static final class ByKey implements KeySelector<Long, Long> {
    private final int keys;

    ByKey(int keys) {
      this.keys = keys;
    }

    @Override
    public Long getKey(Long value) {
      return value % keys;
    }
  }

  /** Passes records through; its operator state snapshot fails while the trigger file exists. */
  static final class SnapshotTrigger implements MapFunction<Long, Long>, CheckpointedFunction {
    private final String trigger;

    SnapshotTrigger(String trigger) {
      this.trigger = trigger;
    }

    @Override
    public Long map(Long value) {
      return value;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
      if (Files.exists(Paths.get(trigger))) {
        throw new IllegalStateException(
            "lab fault: trigger file " + trigger + " present at checkpoint " + context.getCheckpointId());
      }
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {}
  }

  /**
   * One random payload per key, replaced now and then: the keyed state checkpointed to hdfs://. With a growth, each
   * record also appends {@code grow} random bytes to its key's list: state that is never cleared.
   */
  static final class StateBuilder extends KeyedProcessFunction<Long, Long, Long> {
    private final int payload;
    private final int grow;
    private final String slow;
    private final int slowMs;
    private transient ValueState<byte[]> state;
    private transient ListState<byte[]> history;
    private transient Random random;
    private transient long slowCheckedAt;
    private transient boolean slowNow;

    StateBuilder(int payload, int grow, String slow, int slowMs) {
      this.payload = payload;
      this.grow = grow;
      this.slow = slow;
      this.slowMs = slowMs;
    }

    /** Whether the slow file exists, looked at no more than ten times a second. */
    private boolean slow() {
      long now = System.currentTimeMillis();
      if (now - slowCheckedAt >= 100) {
        slowCheckedAt = now;
        slowNow = Files.exists(Paths.get(slow));
      }
      return slowNow;
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
      if (state == null) {
        state = getRuntimeContext().getState(new ValueStateDescriptor<>("payload", byte[].class));
        history = getRuntimeContext().getListState(new ListStateDescriptor<>("history", byte[].class));
        random = new Random(ctx.getCurrentKey());
      }
      if (slow()) {
        Thread.sleep(slowMs);
      }
      if (grow > 0) {
        byte[] more = new byte[grow];
        random.nextBytes(more);
        history.add(more);
      }
      byte[] current = state.value();
      if (current == null || value % 97 == 0) {
        current = new byte[payload];
        random.nextBytes(current);
        state.update(current);
      }
      out.collect(value);
    }
  }
}
