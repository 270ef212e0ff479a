// Lucene 4.10.4's own replicator as a peer: an IndexWriter publishes each commit to a
// LocalReplicator (as an IndexRevision, held by a SnapshotDeletionPolicy), and a
// ReplicationClient with an IndexReplicationHandler copies it into the replica directory, which
// ReplicationReader searches. The handler writes the replica through StepDirectory, which stops
// after every call that changes the replica until the test says GO, so the readers look at every
// state the handler goes through.
//
// args: <source dir> <replica dir> <session work dir>
// stdin:  ROUND (add documents, commit, publish, replicate), ROUND MERGE (the same after a
//         forceMerge(1), so the new commit shares no segment with the old one), GO (after a
//         STEP), STOP.
// stdout: READY <gen>; STEP <call>; DONE <gen>; ERROR <exception>.

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.KeepOnlyLastCommitDeletionPolicy;
import org.apache.lucene.index.SnapshotDeletionPolicy;
import org.apache.lucene.replicator.IndexReplicationHandler;
import org.apache.lucene.replicator.IndexRevision;
import org.apache.lucene.replicator.LocalReplicator;
import org.apache.lucene.replicator.PerSessionDirectoryFactory;
import org.apache.lucene.replicator.ReplicationClient;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.util.Version;

public class HandlerPeer410 {
    static final LinkedBlockingQueue<String> commands = new LinkedBlockingQueue<>();
    static volatile boolean pausing = false;

    public static void main(String[] args) throws Exception {
        try {
            run(args);
        } catch (Throwable t) {
            System.out.println("ERROR " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** After a call that changed the replica: report it, wait for GO. */
    static void step(String what) throws IOException {
        if (!pausing) {
            return;
        }
        say("STEP " + what);
        try {
            String c = commands.take();
            if (!c.equals("GO")) {
                throw new IOException("expected GO, got " + c);
            }
        } catch (InterruptedException e) {
            throw new IOException(e);
        }
    }

    static void run(String[] args) throws Exception {
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    commands.add(line.trim());
                }
            } catch (Exception e) {
            }
            commands.add("STOP");
        });
        stdin.setDaemon(true);
        stdin.start();

        Directory source = FSDirectory.open(new File(args[0]));
        Directory replica = new StepDirectory(FSDirectory.open(new File(args[1])));
        IndexWriterConfig conf = new IndexWriterConfig(Version.LUCENE_4_10_4, null);
        SnapshotDeletionPolicy sdp =
                new SnapshotDeletionPolicy(new KeepOnlyLastCommitDeletionPolicy());
        conf.setIndexDeletionPolicy(sdp);
        IndexWriter writer = new IndexWriter(source, conf);
        LocalReplicator replicator = new LocalReplicator();
        IndexReplicationHandler handler = new IndexReplicationHandler(replica, null);
        ReplicationClient client = new ReplicationClient(replicator, handler,
                new PerSessionDirectoryFactory(new File(args[2])));
        int doc = 0;
        doc = addDocs(writer, doc);
        writer.commit();
        replicator.publish(new IndexRevision(writer));
        client.updateNow();
        say("READY " + handler.currentVersion());
        while (true) {
            String c = commands.take();
            if (c.equals("STOP")) {
                break;
            }
            if (!c.startsWith("ROUND")) {
                throw new IllegalStateException("unexpected " + c);
            }
            doc = addDocs(writer, doc);
            if (c.equals("ROUND MERGE")) {
                writer.forceMerge(1);
            }
            writer.commit();
            replicator.publish(new IndexRevision(writer));
            pausing = true;
            client.updateNow();
            pausing = false;
            say("DONE " + writer.getCommitData().size() + " " + handler.currentVersion());
        }
        client.close();
        replicator.close();
        writer.close();
    }

    static int addDocs(IndexWriter writer, int from) throws IOException {
        // Large enough that no reader's buffer holds a whole segment: a by-name reader reads
        // its files again while it searches.
        StringBuilder body = new StringBuilder();
        for (int k = 0; k < 100; k++) {
            body.append("word").append(k).append(' ');
        }
        for (int i = from; i < from + 100; i++) {
            Document d = new Document();
            d.add(new StringField("id", Integer.toString(i), Field.Store.YES));
            d.add(new StoredField("body", body + Integer.toString(i)));
            writer.addDocument(d);
        }
        return from + 100;
    }

    /** The replica, stopping after every call that changes it. */
    static final class StepDirectory extends FilterDirectory {
        StepDirectory(Directory in) {
            super(in);
        }

        @Override
        public IndexOutput createOutput(String name, IOContext context) throws IOException {
            IndexOutput out = in.createOutput(name, context);
            step("create " + name);
            return new StepOutput(name, out);
        }

        @Override
        public void deleteFile(String name) throws IOException {
            in.deleteFile(name);
            step("delete " + name);
        }

        @Override
        public void sync(Collection<String> names) throws IOException {
            in.sync(names);
            step("sync " + names);
        }
    }

    /** Reports the end of a copy (all bytes written, closed) as a step. */
    static final class StepOutput extends IndexOutput {
        final String name;
        final IndexOutput out;

        StepOutput(String name, IndexOutput out) {
            this.name = name;
            this.out = out;
        }

        @Override public void writeByte(byte b) throws IOException { out.writeByte(b); }
        @Override public void writeBytes(byte[] b, int off, int len) throws IOException {
            out.writeBytes(b, off, len);
        }
        @Override public void flush() throws IOException { out.flush(); }
        @Override public long getFilePointer() { return out.getFilePointer(); }
        @Override public long getChecksum() throws IOException { return out.getChecksum(); }
        @Override public void close() throws IOException {
            out.close();
            step("fill " + name);
        }
    }
}
