// ReplicationReader for Lucene 8.7: the same reader threads on the replica (a loop of search +
// DirectoryReader.openIfChanged), with 8.7's reader code. 8.7 has no fallback to the previous
// segments_N, but its FindSegmentsFile still retries a listing that changed under it and reports
// each exception it retries on through SegmentInfos.setInfoStream ("primary Exception on
// 'segments_N': ...; will retry"), as 4.10 does: those are the RETRY lines. Whatever is not
// retried reaches the application as a FAIL.
//
// args: <replica dir> <modes, comma-separated: handles, by-name>
//   handles   FSDirectory.open: Lucene holds every file it reads open (local filesystem)
//   by-name   every read opens the file by name again (a network filesystem client's view)
// stdin: HOLD (search, but do not reopen), GO (reopen again), STOP.
// stdout: TRY <mode> <n>, OPEN <mode> <gen>, RETRY <mode> <message>, FAIL <mode> <phase>
// <exception>, SUMMARY lines.

import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.lucene.document.Document;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.store.BufferedIndexInput;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;

public class ReplicationReader87 {
    static volatile boolean hold = false;
    static volatile boolean stop = false;
    static final Map<String, AtomicLong[]> counters = new ConcurrentHashMap<>();

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        Path replica = Paths.get(args[0]);
        // FindSegmentsFile reports each exception it retries on here, as
        // "SIS [<thread>]: primary Exception on 'segments_N': ...".
        SegmentInfos.setInfoStream(new PrintStream(new LineSink(), true, "UTF-8"));
        List<Thread> threads = new ArrayList<>();
        for (String mode : args[1].split(",")) {
            // tries, opens, fails, retries
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
            say("SUMMARY " + e.getKey() + " tries=" + c[0] + " opens=" + c[1] + " retries=" + c[3]
                + " fails=" + c[2]);
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
                        c[3].incrementAndGet();
                    }
                    say("RETRY " + mode + " " + s.substring(close + 2).replace('\n', ' '));
                }
            } else {
                line.append((char) b);
            }
        }
    }

    static void loop(Path replica, String mode) {
        AtomicLong[] c = counters.get(mode);
        DirectoryReader reader = null;
        try {
            Directory fs = FSDirectory.open(replica);
            Directory dir = mode.equals("by-name") ? new ByNameDirectory(fs, replica) : fs;
            while (!stop) {
                String phase = "open";
                try {
                    if (reader == null) {
                        reader = DirectoryReader.open(dir);
                        c[1].incrementAndGet();
                        say("OPEN " + mode + " " + reader.getIndexCommit().getGeneration());
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
                            phase = "search";
                            search(reader);
                        }
                    }
                } catch (Throwable t) {
                    c[2].incrementAndGet();
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

    /** The stored fields of the first and the last document of every segment. */
    static void search(DirectoryReader reader) throws IOException {
        new IndexSearcher(reader).search(new MatchAllDocsQuery(), 1);
        for (LeafReaderContext leaf : reader.leaves()) {
            int max = leaf.reader().maxDoc();
            for (int doc : new int[] {0, max - 1}) {
                if (doc < 0) {
                    continue;
                }
                Document d = leaf.reader().document(doc);
                if (d.get("id") == null || d.get("body") == null) {
                    throw new IllegalStateException("document " + doc + " lost its stored fields");
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
        protected void readInternal(ByteBuffer b) throws IOException {
            long pos = getFilePointer();
            if (pos + b.remaining() > length) {
                throw new EOFException("read past EOF: " + this);
            }
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
                long at = pos;
                while (b.hasRemaining()) {
                    int n = ch.read(b, at);
                    if (n < 0) {
                        throw new EOFException("read past EOF: " + this);
                    }
                    at += n;
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
