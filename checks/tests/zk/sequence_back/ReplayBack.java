import java.io.File;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.jute.Record;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.DataNode;
import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.persistence.FileTxnLog;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;
import org.apache.zookeeper.txn.*;

/** A member's log in the shape observed on real 3.8.0 followers after a SyncThread died (an
 *  older range of zxids written again after newer ones), replayed by ZooKeeper's own restore:
 *  prints the container directory's stored counter after each of two restores. */
public class ReplayBack {
    static long zxid = 0x100000000L;
    static FileTxnLog log;
    static void put(int type, Record txn) throws Exception {
        zxid++;
        log.append(new TxnHeader(1, (int) zxid, zxid, 0, type), txn);
    }
    static void putAt(long z, int type, Record txn) throws Exception {
        log.append(new TxnHeader(1, (int) z, z, 0, type), txn);
    }
    public static void main(String[] a) throws Exception {
        File dir = new File(a[0]);
        FileTxnSnapLog snap = new FileTxnSnapLog(dir, dir);
        snap.save(new DataTree(), new ConcurrentHashMap<>(), false);
        log = new FileTxnLog(snap.getDataDir());
        String d = "/locks/d";
        put(ZooDefs.OpCode.create, new CreateTxn("/locks", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, 1));
        int parent = 1;
        put(ZooDefs.OpCode.createContainer, new CreateContainerTxn(d, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, ++parent));
        // Incarnation 1: 40 children created and deleted (counter 40).
        for (int i = 0; i < 40; i++) {
            String c = String.format("%s/n-%010d", d, i);
            put(ZooDefs.OpCode.create, new CreateTxn(c, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, i + 1));
            put(ZooDefs.OpCode.delete, new DeleteTxn(c));
        }
        // Reaped and made again: the range an old SyncThread will write again below.
        long rangeStart = zxid + 1;
        put(ZooDefs.OpCode.deleteContainer, new DeleteTxn(d));
        put(ZooDefs.OpCode.createContainer, new CreateContainerTxn(d, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, ++parent));
        for (int i = 0; i < 10; i++) {
            String c = String.format("%s/n-%010d", d, i);
            put(ZooDefs.OpCode.create, new CreateTxn(c, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, i + 1));
            put(ZooDefs.OpCode.delete, new DeleteTxn(c));
        }
        long rangeEnd = zxid;
        // Incarnation 2 goes on to 60.
        for (int i = 10; i < 60; i++) {
            String c = String.format("%s/n-%010d", d, i);
            put(ZooDefs.OpCode.create, new CreateTxn(c, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, i + 1));
            put(ZooDefs.OpCode.delete, new DeleteTxn(c));
        }
        log.commit();
        report(dir, "log in zxid order");
        // The same range again, after the newer transactions (FileTxnLog.append only warns).
        long z = rangeStart;
        putAt(z++, ZooDefs.OpCode.deleteContainer, new DeleteTxn(d));
        putAt(z++, ZooDefs.OpCode.createContainer, new CreateContainerTxn(d, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, parent));
        for (int i = 0; i < 10; i++) {
            String c = String.format("%s/n-%010d", d, i);
            putAt(z++, ZooDefs.OpCode.create, new CreateTxn(c, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, i + 1));
            putAt(z++, ZooDefs.OpCode.delete, new DeleteTxn(c));
        }
        log.commit();
        log.close();
        report(dir, "the range 0x" + Long.toHexString(rangeStart) + "-0x" + Long.toHexString(rangeEnd) + " written again after 0x" + Long.toHexString(zxid));
    }
    static void report(File dir, String what) throws Exception {
        DataTree dt = new DataTree();
        long last = new FileTxnSnapLog(dir, dir).restore(dt, new ConcurrentHashMap<>(), (h, t, dg) -> { });
        DataNode n = dt.getNode("/locks/d");
        System.out.printf("%s: restored to 0x%x; /locks/d czxid 0x%x, stored counter %d (next suffix %d), children %d%n",
            what, last, n.stat.getCzxid(), n.stat.getCversion(), n.stat.getCversion(), n.getChildren().size());
    }
}
