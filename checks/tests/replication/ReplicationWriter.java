// The source side of checks/tests/replication_lucene.rs: a Lucene 4.10.4 IndexWriter that keeps
// committing, and publishes each commit for the copier the way Lucene's replicator publishes a
// revision: it holds the commit with a SnapshotDeletionPolicy (so its files stay on disk) and
// writes a manifest, manifests/commit-<generation>, listing IndexCommit.getFileNames(), by
// temp file + atomic rename. Before the manifest it writes manifests/docs-<generation>: what
// that commit holds, the live document count on the first line and the live ids on the second
// (kept after a RELEASE), so that a reader can check the commit it opened document by document.
//
//   java -cp lucene-core-4.10.4.jar:. ReplicationWriter INDEX_DIR MANIFEST_DIR INTERVAL_MS
//
// stdin, one command per line:
//   RELEASE <gen>   the copier has a commit of generation <gen>: release every older commit
//                   (its manifest first, then its snapshot; the writer then deletes its files)
//   MERGE           make the next commit a forceMerge(1): it shares no segment with older ones
//   STOP            close the writer and exit
// stdout: "COMMIT <gen> <files>" after each commit ("MERGED <gen>" after a MERGE's commit),
// "RELEASED <n>" after a release, "DONE".
// Any exception: "ERROR ..." on stdout and exit status 1.

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.IndexCommit;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.KeepOnlyLastCommitDeletionPolicy;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.SnapshotDeletionPolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Version;

public class ReplicationWriter {
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

    static void run(String[] args) throws Exception {
        File indexDir = new File(args[0]);
        Path manifests = new File(args[1]).toPath();
        long intervalMs = Long.parseLong(args[2]);
        Files.createDirectories(manifests);

        LinkedBlockingQueue<String> commands = new LinkedBlockingQueue<>();
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    commands.add(line.trim());
                }
            } catch (Exception e) {
                // fall through: treat a closed stdin as STOP
            }
            commands.add("STOP");
        });
        stdin.setDaemon(true);
        stdin.start();

        Directory dir = FSDirectory.open(indexDir);
        SnapshotDeletionPolicy snapshots =
            new SnapshotDeletionPolicy(new KeepOnlyLastCommitDeletionPolicy());
        // No analyzer: every field is untokenized.
        IndexWriterConfig config = new IndexWriterConfig(Version.LUCENE_4_10_4, null);
        config.setIndexDeletionPolicy(snapshots);
        LogDocMergePolicy merges = new LogDocMergePolicy();
        merges.setMergeFactor(3);
        merges.setMinMergeDocs(10);
        config.setMergePolicy(merges);
        // Merges run inside commit(): each commit is a finished, self-contained state.
        config.setMergeScheduler(new SerialMergeScheduler());
        IndexWriter writer = new IndexWriter(dir, config);

        TreeMap<Long, IndexCommit> held = new TreeMap<>();
        // The ids the index holds: what each commit must show a reader.
        TreeSet<Long> live = new TreeSet<>();
        long nextId = 0;
        boolean merge = false;
        while (true) {
            // 20 documents, and a few deletes of earlier ones (so commits carry .del files).
            for (int i = 0; i < 20; i++, nextId++) {
                Document doc = new Document();
                doc.add(new StringField("id", Long.toString(nextId), Field.Store.YES));
                doc.add(new StringField("kind", nextId % 2 == 0 ? "even" : "odd", Field.Store.NO));
                doc.add(new StoredField("body", "document " + nextId + " of the replication test"));
                doc.add(new NumericDocValuesField("n", nextId));
                writer.addDocument(doc);
                live.add(nextId);
            }
            writer.deleteDocuments(new Term("id", Long.toString(nextId / 3)));
            live.remove(nextId / 3);
            if (merge) {
                writer.forceMerge(1);
            }
            writer.commit();
            IndexCommit commit = snapshots.snapshot();
            long gen = commit.getGeneration();
            held.put(gen, commit);
            StringBuilder ids = new StringBuilder();
            for (long id : live) {
                ids.append(id).append(' ');
            }
            Path docs = manifests.resolve("docs-" + gen + ".tmp");
            Files.write(docs, java.util.Arrays.asList(Integer.toString(live.size()), ids.toString().trim()),
                StandardCharsets.UTF_8);
            Files.move(docs, manifests.resolve("docs-" + gen), StandardCopyOption.ATOMIC_MOVE);
            Path tmp = manifests.resolve("commit-" + gen + ".tmp");
            Files.write(tmp, commit.getFileNames(), StandardCharsets.UTF_8);
            Files.move(tmp, manifests.resolve("commit-" + gen), StandardCopyOption.ATOMIC_MOVE);
            System.out.println("COMMIT " + gen + " " + commit.getFileNames().size());
            if (merge) {
                System.out.println("MERGED " + gen);
                merge = false;
            }
            System.out.flush();

            long until = System.currentTimeMillis() + intervalMs;
            for (long left; (left = until - System.currentTimeMillis()) > 0; ) {
                String cmd = commands.poll(left, java.util.concurrent.TimeUnit.MILLISECONDS);
                if (cmd == null) {
                    break;
                }
                if (cmd.equals("STOP")) {
                    writer.close();
                    System.out.println("DONE");
                    System.out.flush();
                    return;
                }
                if (cmd.equals("MERGE")) {
                    merge = true;
                    break; // commit now
                }
                if (cmd.startsWith("RELEASE ")) {
                    long keepFrom = Long.parseLong(cmd.substring(8).trim());
                    int released = 0;
                    while (!held.isEmpty() && held.firstKey() < keepFrom) {
                        Map.Entry<Long, IndexCommit> e = held.pollFirstEntry();
                        Files.deleteIfExists(manifests.resolve("commit-" + e.getKey()));
                        snapshots.release(e.getValue());
                        released++;
                    }
                    writer.deleteUnusedFiles();
                    System.out.println("RELEASED " + released);
                    System.out.flush();
                }
            }
        }
    }
}
