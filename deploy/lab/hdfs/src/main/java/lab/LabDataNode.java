package lab;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.DataNodeFaultInjector;
import org.apache.hadoop.hdfs.server.datanode.FaultInjectorFileIoEvents;
import org.apache.hadoop.hdfs.server.datanode.FileIoProvider;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.FsDatasetSpi;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.FsVolumeSpi;

/**
 * A stock DataNode started through its public entry point, plus faults the lab switches on and off with files in the
 * directory named by -Dlab.control: a fault is active while its file exists, and its content is a number of
 * milliseconds (a per-write or per-packet delay; ignored by the lock).
 *
 * <ul>
 *   <li>{@code lock}: a thread of our own (not the DirectoryScanner) takes the dataset lock through the public
 *       FsDatasetSpi API and holds it until the file is removed.</li>
 *   <li>{@code slow-disk}: every block data write sleeps first (3.4: DataNodeFaultInjector#delayWriteToDisk; 3.3:
 *       the FileIoProvider's fault-injection events, which BlockReceiver's timed disk write goes through).</li>
 *   <li>{@code slow-pipeline}: packets to the mirror and acks to upstream are delayed (DataNodeFaultInjector).</li>
 * </ul>
 * What this wrapper does is printed to stdout, never to the DataNode's own log.
 */
public final class LabDataNode {
  private static final long MAX_FAULT_MS = 120_000;
  private static Path control;

  private LabDataNode() {}

  public static void main(String[] args) throws Exception {
    control = Paths.get(System.getProperty("lab.control"));
    Files.createDirectories(control);
    DataNodeFaultInjector.set(new Injector());
    Configuration conf = new HdfsConfiguration();
    DataNode dn = DataNode.createDataNode(args, conf);
    if (dn == null) {
      System.err.println("lab: DataNode did not start");
      System.exit(1);
    }
    boolean hasDiskHook = hasMethod(DataNodeFaultInjector.class, "delayWriteToDisk");
    if (!hasDiskHook) {
      replaceFileIoEvents(dn, conf);
    }
    say("DataNode up at " + dn.getXferAddress() + "; disk fault via "
        + (hasDiskHook ? "DataNodeFaultInjector#delayWriteToDisk" : "FileIoProvider fault-injection events"));
    Thread holder = new Thread(() -> holdLockOnDemand(dn), "lab-lock-holder");
    holder.setDaemon(true);
    holder.start();
    while (dn.isDatanodeUp()) {
      Thread.sleep(1000);
    }
    say("DataNode is down");
  }

  static void say(String what) {
    System.out.println(Instant.now() + " lab: " + what);
    System.out.flush();
  }

  static long delayOf(String fault) {
    Path f = control.resolve(fault);
    try {
      return Files.exists(f) ? Long.parseLong(new String(Files.readAllBytes(f)).trim()) : 0L;
    } catch (IOException | NumberFormatException e) {
      return 0L;
    }
  }

  static void sleepFor(String fault) {
    long ms = delayOf(fault);
    if (ms > 0) {
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static boolean hasMethod(Class<?> cls, String name) {
    for (Method m : cls.getMethods()) {
      if (m.getName().equals(name)) {
        return true;
      }
    }
    return false;
  }

  /** 3.3 has no disk-write hook in DataNodeFaultInjector: swap the FileIoProvider's own fault-injection events. */
  private static void replaceFileIoEvents(DataNode dn, Configuration conf) throws Exception {
    FileIoProvider io = dn.getFileIoProvider();
    Field f = FileIoProvider.class.getDeclaredField("faultInjectorEventHook");
    f.setAccessible(true);
    f.set(io, new SlowDiskEvents(conf));
  }

  /** Waits for the lock file, then holds the dataset lock until the file is gone (bounded). */
  private static void holdLockOnDemand(DataNode dn) {
    Path f = control.resolve("lock");
    while (true) {
      try {
        if (Files.exists(f)) {
          holdDatasetLock(dn, f);
        }
        Thread.sleep(50);
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        say("lock fault failed: " + e);
        try {
          while (Files.exists(f)) {
            Thread.sleep(50);
          }
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  private static void holdDatasetLock(DataNode dn, Path f) throws Exception {
    Object dataset = dn.getFSDataset();
    AutoCloseable lock = acquire(dataset, dn);
    long start = System.currentTimeMillis();
    say("dataset lock taken by thread " + Thread.currentThread().getName());
    try {
      while (Files.exists(f) && System.currentTimeMillis() - start < MAX_FAULT_MS) {
        Thread.sleep(20);
      }
    } finally {
      lock.close();
      say("dataset lock released after " + (System.currentTimeMillis() - start) + " ms");
    }
    while (Files.exists(f)) {
      Thread.sleep(50);
    }
  }

  /**
   * 3.3: FsDatasetSpi#acquireDatasetLock() (an instrumented lock that reports its hold time); 3.4 removed it for the
   * DataSetLockManager, whose block-pool write lock is taken for every block pool the DataNode serves.
   */
  private static AutoCloseable acquire(Object dataset, DataNode dn) throws Exception {
    try {
      Method m = FsDatasetSpi.class.getMethod("acquireDatasetLock");
      return (AutoCloseable) m.invoke(dataset);
    } catch (NoSuchMethodException e) {
      Object manager = FsDatasetSpi.class.getMethod("acquireDatasetLockManager").invoke(dataset);
      Class<?> managerApi = Class.forName("org.apache.hadoop.hdfs.server.common.DataNodeLockManager");
      Class<?> level = Class.forName("org.apache.hadoop.hdfs.server.common.DataNodeLockManager$LockLevel");
      Object bpLevel = null;
      for (Object c : level.getEnumConstants()) {
        if (c.toString().startsWith("BLOCK_POO")) {
          bpLevel = c;
        }
      }
      Method writeLock = null;
      for (Method m : managerApi.getMethods()) {
        if (m.getName().equals("writeLock") && m.getParameterCount() == 2) {
          writeLock = m;
        }
      }
      java.util.Set<String> ids = new java.util.TreeSet<>();
      try (FsDatasetSpi.FsVolumeReferences volumes = dn.getFSDataset().getFsVolumeReferences()) {
        for (FsVolumeSpi v : volumes) {
          ids.addAll(java.util.Arrays.asList(v.getBlockPoolList()));
        }
      }
      String[] pools = ids.toArray(new String[0]);
      final AutoCloseable[] held = new AutoCloseable[pools.length];
      for (int i = 0; i < pools.length; i++) {
        held[i] = (AutoCloseable) writeLock.invoke(manager, bpLevel, new String[] {pools[i]});
      }
      return () -> {
        for (int i = held.length - 1; i >= 0; i--) {
          held[i].close();
        }
      };
    }
  }

  /** The lab's DataNodeFaultInjector: delays while the matching control file exists, a no-op otherwise. */
  static final class Injector extends DataNodeFaultInjector {
    @Override
    public void stopSendingPacketDownstream(String mirrAddr) throws IOException {
      sleepFor("slow-pipeline");
    }

    @Override
    public void delaySendingAckToUpstream(String upstreamAddr) throws IOException {
      sleepFor("slow-pipeline");
    }

    /** Overrides the 3.4 hook (absent from 3.3, where SlowDiskEvents does the same job). */
    public void delayWriteToDisk() {
      sleepFor("slow-disk");
    }
  }

  /** 3.3: the events FileIoProvider calls before every file operation; block data writes sleep first. */
  static final class SlowDiskEvents extends FaultInjectorFileIoEvents {
    SlowDiskEvents(Configuration conf) {
      super(conf);
    }

    @Override
    public void beforeFileIo(FsVolumeSpi volume, FileIoProvider.OPERATION op, long len) {
      if (op == FileIoProvider.OPERATION.WRITE && len > 0) {
        sleepFor("slow-disk");
      }
    }
  }
}
