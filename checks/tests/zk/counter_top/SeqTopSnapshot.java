// Writes a ZooKeeper 3.8 snapshot with one persistent lock directory whose child counter
// (`cversion`, the next sequential suffix) is set near the top of its signed 32-bit range, so a
// throwaway server started on this data directory goes on from there. Uses ZooKeeper's own
// classes: DataTree, then FileTxnSnapLog.save (DESIGN.md, "The sequence counter at its top").
//
// Usage: java -cp zookeeper.jar:zookeeper-jute.jar:slf4j-api.jar:DIR SeqTopSnapshot DATA_DIR PATH CVERSION
import java.io.File;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;

public class SeqTopSnapshot {
    public static void main(String[] args) throws Exception {
        File data = new File(args[0]);
        String path = args[1];
        int cversion = Integer.parseInt(args[2]);
        DataTree tree = new DataTree();
        long zxid = 1;
        String prefix = "";
        for (String part : path.substring(1).split("/")) {
            prefix = prefix + "/" + part;
            // parentCVersion -1: the parent's own counter plus one, as a plain create does.
            tree.createNode(prefix, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, -1, zxid, zxid);
            zxid++;
        }
        tree.getNode(path).stat.setCversion(cversion);
        tree.lastProcessedZxid = zxid - 1;
        new FileTxnSnapLog(data, data).save(tree, new ConcurrentHashMap<Long, Integer>(), false);
        System.out.println("SNAPSHOT " + path + " cversion " + tree.getNode(path).stat.getCversion());
    }
}
