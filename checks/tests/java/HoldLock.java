// Holds `FileChannel.tryLock()` on a file (what Lucene's NativeFSLockFactory does: a
// whole-file POSIX F_SETLK) until stdin closes. Used by tests/file_peers/holders/mod.rs (the Java interop tests).
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

public class HoldLock {
    public static void main(String[] args) throws IOException {
        Path path = Paths.get(args[0]);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                System.out.println("held by another program");
                System.exit(3);
            }
            System.out.println("lockwright-child: locked");
            System.out.flush();
            while (System.in.read() != -1) {
                // hold until the parent closes our stdin
            }
            lock.release();
        }
    }
}
