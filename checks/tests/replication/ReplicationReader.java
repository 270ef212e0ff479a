// The replica side of checks/tests/replication_lucene.rs: Lucene 4.10.4 readers on the replica
// directory, each a thread that searches its reader and reopens it (openIfChanged) in a loop,
// as a periodic reopen thread on a search replica does.
//
//   java -cp lucene-core-4.10.4.jar:. ReplicationReader REPLICA_DIR MODE[,MODE...] [MANIFEST_DIR]
//
// With MANIFEST_DIR (ReplicationWriter's), every commit a thread opens is checked document by
// document against what the writer committed at that generation (manifests/docs-<gen>: the
// live count and ids): a missing record, another count or other ids is a FAIL in phase
// "verify"; a match prints VERIFIED.
//
// MODE is the thread's name and how it reaches files:
//   handles   FSDirectory.open: Lucene holds every file it reads open (local filesystem)
//   by-name   ByNameDirectory: every read opens the file by name again, as a client of a
//             network filesystem sees another client's delete (its handle goes stale)
//
// stdin: HOLD (search, but do not reopen), GO (reopen again), STOP (print SUMMARY lines, exit).
// stdout, one line per event:
//   TRY <mode> <n>                  the thread finished its n-th search + reopen attempt
//   OPEN <mode> <gen>               it now searches commit <gen>
//   VERIFIED <mode> <gen> <count>   that commit holds exactly the <count> documents the writer
//                                   committed at <gen>
//   RETRY <mode> <message>          Lucene's FindSegmentsFile caught an exception on the newest
//                                   segments_N and will retry (or fall back to segments_N-1):
//                                   the reader met a missing or partial file, masked by Lucene
//   FAIL <mode> <phase> <exception> an exception reached the application
//   SUMMARY <mode> tries=.. opens=.. retries=.. fails=..

import java.io.BufferedReader;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.lucene.document.Document;
import org.apache.lucene.index.AtomicReaderContext;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.util.Bits;
import org.apache.lucene.store.BufferedIndexInput;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;

public class ReplicationReader {
    static volatile boolean hold = false;
    static volatile boolean stop = false;
    static final Map<String, AtomicLong[]> counters = new ConcurrentHashMap<>();
    static volatile Path manifests = null;

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        File replica = new File(args[0]);
        if (args.length > 2) {
            manifests = new File(args[2]).toPath();
        }
        // FindSegmentsFile reports each exception it retries on here, as
        // "SIS [<thread>]: primary Exception on 'segments_N': ...".
        SegmentInfos.setInfoStream(new PrintStream(new LineSink(), true, "UTF-8"));
        List<Thread> threads = new ArrayList<>();
        for (String mode : args[1].split(",")) {
            counters.put(mode, new AtomicLong[] {
                new AtomicLong(), new AtomicLong(), new AtomicLong(), new AtomicLong()});
            Thread t = new Thread(() -> loop(replica, mode), mode);
            threads.add(t);
            t.start();
        }
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                switch (line.trim()) {
                    case "HOLD": hold = true; say("HELD"); break;
                    case "GO": hold = false; say("GOING"); break;
                    case "STOP": stop = true; break;
                    default: break;
                }
                if (stop) {
                    break;
                }
            }
        }
        stop = true;
        for (Thread t : threads) {
            t.join();
        }
        for (Map.Entry<String, AtomicLong[]> e : counters.entrySet()) {
            AtomicLong[] c = e.getValue();
            say("SUMMARY " + e.getKey() + " tries=" + c[0] + " opens=" + c[1] + " retries=" + c[2]
                + " fails=" + c[3]);
        }
    }

    /** Collects FindSegmentsFile's messages line by line and reports the retried exceptions. */
    static final class LineSink extends OutputStream {
        private final StringBuilder line = new StringBuilder();

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                String s = line.toString();
                line.setLength(0);
                int open = s.indexOf('['), close = s.indexOf(']');
                if (s.contains("primary Exception") && open >= 0 && close > open) {
                    String mode = s.substring(open + 1, close);
                    AtomicLong[] c = counters.get(mode);
                    if (c != null) {
                        c[2].incrementAndGet();
                    }
                    say("RETRY " + mode + " " + s.substring(close + 2).replace('\n', ' '));
                }
            } else {
                line.append((char) b);
            }
        }
    }

    static void loop(File replica, String mode) {
        AtomicLong[] c = counters.get(mode);
        DirectoryReader reader = null;
        try {
            Directory fs = FSDirectory.open(replica);
            Directory dir = mode.equals("by-name") ? new ByNameDirectory(fs, replica.toPath()) : fs;
            while (!stop) {
                String phase = "open";
                try {
                    if (reader == null) {
                        reader = DirectoryReader.open(dir);
                        c[1].incrementAndGet();
                        say("OPEN " + mode + " " + reader.getIndexCommit().getGeneration());
                        phase = "verify";
                        verify(reader, mode);
                    }
                    phase = "search";
                    search(reader);
                    if (!hold) {
                        phase = "reopen";
                        DirectoryReader newer = DirectoryReader.openIfChanged(reader);
                        if (newer != null) {
                            DirectoryReader old = reader;
                            reader = newer;
                            old.close();
                            c[1].incrementAndGet();
                            say("OPEN " + mode + " " + reader.getIndexCommit().getGeneration());
                            phase = "verify";
                            verify(reader, mode);
                            phase = "search";
                            search(reader);
                        }
                    }
                } catch (Throwable t) {
                    c[3].incrementAndGet();
                    say("FAIL " + mode + " " + phase + " " + t.getClass().getName() + ": "
                        + String.valueOf(t.getMessage()).replace('\n', ' '));
                }
                say("TRY " + mode + " " + c[0].incrementAndGet());
                Thread.sleep(2);
            }
        } catch (Throwable t) {
            say("FAIL " + mode + " setup " + t);
        }
    }

    /**
     * The commit `reader` opened holds exactly the documents the writer committed at its
     * generation (manifests/docs-<gen>): the live count, and every live document's stored id.
     */
    static void verify(DirectoryReader reader, String mode) throws IOException {
        if (manifests == null) {
            return;
        }
        long gen = reader.getIndexCommit().getGeneration();
        Path record = manifests.resolve("docs-" + gen);
        if (!Files.exists(record)) {
            throw new IllegalStateException("generation " + gen + ": the writer recorded no such commit");
        }
        List<String> lines = Files.readAllLines(record, StandardCharsets.UTF_8);
        int want = Integer.parseInt(lines.get(0).trim());
        TreeSet<String> wantIds = new TreeSet<>();
        if (lines.size() > 1) {
            for (String id : lines.get(1).trim().split(" ")) {
                if (!id.isEmpty()) {
                    wantIds.add(id);
                }
            }
        }
        TreeSet<String> got = new TreeSet<>();
        for (AtomicReaderContext leaf : reader.leaves()) {
            Bits liveDocs = leaf.reader().getLiveDocs();
            for (int doc = 0; doc < leaf.reader().maxDoc(); doc++) {
                if (liveDocs == null || liveDocs.get(doc)) {
                    got.add(leaf.reader().document(doc).get("id"));
                }
            }
        }
        if (reader.numDocs() != want || !got.equals(wantIds)) {
            TreeSet<String> missing = new TreeSet<>(wantIds);
            missing.removeAll(got);
            TreeSet<String> extra = new TreeSet<>(got);
            extra.removeAll(wantIds);
            throw new IllegalStateException("generation " + gen + ": " + reader.numDocs()
                + " documents, the writer committed " + want + "; missing ids " + missing
                + ", ids the writer did not commit " + extra);
        }
        say("VERIFIED " + mode + " " + gen + " " + want);
    }

    /**
     * Touches every segment's files: the stored fields, postings and doc values of the first and
     * the last document of each segment, and a term query over the whole index. (Reading
     * everything would make an attempt slow as the index grows; this reads from each file.)
     */
    static void search(DirectoryReader reader) throws IOException {
        IndexSearcher searcher = new IndexSearcher(reader);
        searcher.search(new TermQuery(new Term("kind", "even")), 10);
        searcher.search(new MatchAllDocsQuery(), 1);
        for (AtomicReaderContext leaf : reader.leaves()) {
            int max = leaf.reader().maxDoc();
            NumericDocValues n = leaf.reader().getNumericDocValues("n");
            for (int doc : new int[] {0, max - 1}) {
                if (doc < 0) {
                    continue;
                }
                Document d = leaf.reader().document(doc);
                if (d.get("id") == null || d.get("body") == null) {
                    throw new IllegalStateException("document " + doc + " lost its stored fields");
                }
                if (n != null) {
                    n.get(doc);
                }
            }
        }
    }

    /** Every read opens the file by name again: a deleted file is gone for this reader. */
    static final class ByNameDirectory extends FilterDirectory {
        private final Path root;

        ByNameDirectory(Directory in, Path root) {
            super(in);
            this.root = root;
        }

        @Override
        public IndexInput openInput(String name, IOContext context) throws IOException {
            Path path = root.resolve(name);
            return new ByNameInput("ByNameInput(" + path + ")", path, Files.size(path));
        }
    }

    static final class ByNameInput extends BufferedIndexInput {
        private final Path path;
        private final long length;

        ByNameInput(String desc, Path path, long length) {
            super(desc);
            this.path = path;
            this.length = length;
        }

        @Override
        protected void readInternal(byte[] b, int offset, int len) throws IOException {
            long pos = getFilePointer();
            if (pos + len > length) {
                throw new EOFException("read past EOF: " + this);
            }
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
                ByteBuffer buf = ByteBuffer.wrap(b, offset, len);
                while (buf.hasRemaining()) {
                    int n = ch.read(buf, pos + (buf.position() - offset));
                    if (n < 0) {
                        throw new EOFException("read past EOF: " + this);
                    }
                }
            }
        }

        @Override
        protected void seekInternal(long pos) {
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public void close() {
        }
    }
}
