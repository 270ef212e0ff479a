// Curator 5.4 InterProcessMutex peer for lockwright's interop tests and benchmarks
// (compiled at run time by lockwright_checks::peers::curator; classpath: Debian's curator-recipes.jar,
// whose manifest pulls in curator-framework, curator-client, zookeeper, guava, slf4j).
//
//   stress  CONNECT PATH VHOST VPORT ID COUNT SLEEP_MS   LockVerifyServer wire protocol: id byte, wait for 43,
//                                                       then per acquire: send 1 after acquiring, 0 before releasing,
//                                                       each echoed; hold SLEEP_MS.
//   hold    CONNECT PATH HOLD_MS                          acquire, print "HELD <node> <session>", hold, release, "RELEASED"
//   try     CONNECT PATH TIMEOUT_MS                       print "ACQUIRED <node>" (then release) or "NOT_ACQUIRED"
//   bench   CONNECT PATH N WARMUP PAUSE_MS                uncontended acquire+release; prints WARM_DONE and BENCH_DONE,
//                                                       each followed by a PAUSE_MS pause (the caller reads the
//                                                       server's counters then), then "RESULT n=.. median_us=.. p99_us=.."
//   handoff CONNECT PATH THREADS ROUNDS HOLD_MS           THREADS clients contend ROUNDS acquisitions each, holding HOLD_MS;
//                                                       hand-off latency = grant time - the previous holder's release
//                                                       start (grants to another client already waiting); prints RESULT
//   fenced  CONNECT PATH VHOST VPORT LHOST LPORT ID HOLD_MS SESSION_MS
//                                                       a `lockwright zk-stress-run` client: the verify-server loop of
//                                                       `stress`, plus the ledger protocol (checks/src/zkstress/ledger.rs):
//                                                       HOLD with the lock node's czxid and owner session, two fenced
//                                                       WRITEs HOLD_MS apart, LOST after a rejection, RELEASED; ends
//                                                       when the ledger answers STOP
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public class CuratorPeer {
    /** Exposes the protected getLockPath() (the node this thread holds). */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework c, String p) { super(c, p); }
        String node() { return getLockPath(); }
    }

    static CuratorFramework client(String cs) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(cs)
            .sessionTimeoutMs(4000)
            .connectionTimeoutMs(4000)
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("no connection to " + cs);
        return c;
    }

    static String session(CuratorFramework c) throws Exception {
        return "0x" + Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId());
    }

    public static void main(String[] a) throws Exception {
        switch (a.length > 0 ? a[0] : "") {
            case "stress": stress(a[1], a[2], a[3], Integer.parseInt(a[4]), Integer.parseInt(a[5]),
                                  Integer.parseInt(a[6]), Long.parseLong(a[7])); break;
            case "fenced": fenced(a[1], a[2], a[3], Integer.parseInt(a[4]), a[5], Integer.parseInt(a[6]),
                                  Integer.parseInt(a[7]), Long.parseLong(a[8]), Integer.parseInt(a[9])); break;
            case "hold": hold(a[1], a[2], Long.parseLong(a[3])); break;
            case "try": tryAcquire(a[1], a[2], Long.parseLong(a[3])); break;
            case "bench": bench(a[1], a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]), Long.parseLong(a[5])); break;
            case "handoff": handoff(a[1], a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]), Long.parseLong(a[5])); break;
            default:
                System.err.println("usage: CuratorPeer stress|hold|try|bench|handoff ... (see the source)");
                System.exit(2);
        }
        System.exit(0);
    }

    // The verify server's handshake: send the client id, wait for its start signal (43).
    static void register(DataInputStream in, OutputStream out, int id) throws Exception {
        out.write(id);
        out.flush();
        int start = in.read();
        if (start != 43) throw new IllegalStateException("expected 43 from the verify server, got " + start);
    }

    static void stress(String cs, String path, String vhost, int vport, int id, int count, long sleepMs) throws Exception {
        try (CuratorFramework c = client(cs); Socket s = new Socket(vhost, vport)) {
            Mutex m = new Mutex(c, path);
            s.setTcpNoDelay(true);
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            register(in, out, id);
            for (int i = 0; i < count; i++) {
                m.acquire();
                if (i == 0) System.out.println("curator " + id + " acquired " + m.node());
                say(in, out, 1);
                if (sleepMs > 0) Thread.sleep(sleepMs);
                say(in, out, 0);
                m.release();
            }
            System.out.println("curator " + id + " done " + count);
        }
    }

    /** One ledger request and its answer line. */
    static final class Ledger {
        final Socket s;
        final BufferedReader in;
        final OutputStream out;
        final String who;
        Ledger(String host, int port, int id) throws Exception {
            s = new Socket(host, port);
            s.setTcpNoDelay(true);
            in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            out = s.getOutputStream();
            who = id + " " + ProcessHandle.current().pid();
        }
        String ask(String verb, String rest) throws Exception {
            out.write((verb + " " + who + " " + rest + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            String a = in.readLine();
            if (a == null || a.startsWith("ERR")) throw new IllegalStateException("ledger answered " + a);
            return a;
        }
    }

    static void fenced(String cs, String path, String vhost, int vport, String lhost, int lport, int id,
                       long holdMs, int sessionMs) throws Exception {
        Ledger ledger = new Ledger(lhost, lport, id);
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(cs)
            .sessionTimeoutMs(sessionMs)
            .connectionTimeoutMs(sessionMs)
            .retryPolicy(new ExponentialBackoffRetry(100, 10))
            .build();
        c.start();
        if (!c.blockUntilConnected(60, TimeUnit.SECONDS)) throw new IllegalStateException("no connection to " + cs);
        Mutex m = new Mutex(c, path);
        try (Socket s = new Socket(vhost, vport)) {
            s.setTcpNoDelay(true);
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            register(in, out, id);
            long seq = 0;
            boolean stop = false;
            while (!stop) {
                try {
                    if (!m.acquire(30, TimeUnit.SECONDS)) {
                        ledger.ask("ERROR", "acquire timed out after 30 s");
                        continue;
                    }
                } catch (Exception e) {
                    ledger.ask("ERROR", "acquire: " + e.toString().replace('\n', ' '));
                    Thread.sleep(50);
                    continue;
                }
                seq++;
                String node = m.node();
                Stat st;
                try {
                    st = c.checkExists().forPath(node);
                } catch (Exception e) {
                    st = null;
                }
                if (st == null) {
                    // Cannot learn the token (connection lost, or the node already gone): no writes.
                    ledger.ask("ERROR", "no Stat for the held node " + node);
                    try { m.release(); } catch (Exception e) { /* released in the background */ }
                    continue;
                }
                long token = st.getCzxid();
                long session = st.getEphemeralOwner();
                stop |= ledger.ask("HOLD", seq + " " + token + " " + session).endsWith(" STOP");
                say(in, out, 1);
                boolean rejected = false;
                for (int n = 1; n <= 2 && !rejected; n++) {
                    if (n == 2 && holdMs > 0) Thread.sleep(holdMs);
                    String a = ledger.ask("WRITE", seq + " " + n + " " + token + " " + session);
                    stop |= a.endsWith(" STOP");
                    rejected = a.startsWith("REJECT");
                }
                if (rejected) {
                    // Curator has no lock-lost check of its own: look at the node as ensure_valid does.
                    boolean valid;
                    try {
                        Stat now = c.checkExists().forPath(node);
                        valid = now != null && now.getEphemeralOwner() == session && now.getCzxid() == token;
                    } catch (Exception e) {
                        valid = false;
                    }
                    ledger.ask("LOST", seq + " " + token + " " + (valid ? "1 still-held" : "0 curator-node-gone"));
                }
                say(in, out, 0);
                try {
                    m.release();
                } catch (Exception e) {
                    ledger.ask("ERROR", "release: " + e.toString().replace('\n', ' '));
                }
                stop |= ledger.ask("RELEASED", Long.toString(seq)).endsWith(" STOP");
            }
            System.out.println("curator " + id + " done after " + seq + " holds");
        } finally {
            c.close();
        }
    }

    static void say(DataInputStream in, OutputStream out, int b) throws Exception {
        out.write(b);
        out.flush();
        int got = in.read();
        if (got != b) throw new IllegalStateException("verify server answered " + got + " instead of echoing " + b);
    }

    static void hold(String cs, String path, long holdMs) throws Exception {
        try (CuratorFramework c = client(cs)) {
            Mutex m = new Mutex(c, path);
            m.acquire();
            System.out.println("HELD " + m.node() + " " + session(c));
            System.out.flush();
            Thread.sleep(holdMs);
            m.release();
            System.out.println("RELEASED");
        }
    }

    static void tryAcquire(String cs, String path, long timeoutMs) throws Exception {
        try (CuratorFramework c = client(cs)) {
            Mutex m = new Mutex(c, path);
            if (m.acquire(timeoutMs, TimeUnit.MILLISECONDS)) {
                System.out.println("ACQUIRED " + m.node());
                m.release();
            } else {
                System.out.println("NOT_ACQUIRED");
            }
        }
    }

    static void pause(String line, long ms) throws Exception {
        System.out.println(line);
        System.out.flush();
        Thread.sleep(ms);
    }

    static void bench(String cs, String path, int n, int warm, long pauseMs) throws Exception {
        try (CuratorFramework c = client(cs)) {
            Mutex m = new Mutex(c, path);
            for (int i = 0; i < warm; i++) { m.acquire(); m.release(); }
            pause("WARM_DONE", pauseMs);
            long[] ns = new long[n];
            for (int i = 0; i < n; i++) {
                long t = System.nanoTime();
                m.acquire();
                m.release();
                ns[i] = System.nanoTime() - t;
            }
            pause("BENCH_DONE", pauseMs);
            result(ns);
        }
    }

    /** Prints RESULT; best_block_median_us is the lowest median of consecutive blocks of 200
     *  samples (the least disturbed stretch on a shared machine). */
    static void result(long[] ns) {
        int n = ns.length;
        long best = Long.MAX_VALUE;
        for (int b = 0; b + 200 <= n; b += 200) {
            long[] block = Arrays.copyOfRange(ns, b, b + 200);
            Arrays.sort(block);
            best = Math.min(best, block[100]);
        }
        Arrays.sort(ns);
        if (best == Long.MAX_VALUE) best = ns[n / 2];
        System.out.printf("RESULT n=%d median_us=%d p99_us=%d max_us=%d best_block_median_us=%d%n",
            n, ns[n / 2] / 1000, ns[Math.min(n - 1, (int) (n * 0.99))] / 1000, ns[n - 1] / 1000, best / 1000);
        System.out.flush();
    }

    static void handoff(String cs, String path, int threads, int rounds, long holdMs) throws Exception {
        CuratorFramework[] clients = new CuratorFramework[threads];
        for (int t = 0; t < threads; t++) clients[t] = client(cs);
        // The last release: when it started and by whom. A sample is a grant to ANOTHER
        // client that was already waiting when that release started.
        final Object lock = new Object();
        final long[] last = {0, -1};
        long[][] samples = new long[threads][rounds];
        CountDownLatch go = new CountDownLatch(1);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                try {
                    Mutex m = new Mutex(clients[me], path);
                    go.await();
                    for (int i = 0; i < rounds; i++) {
                        long asked = System.nanoTime();
                        m.acquire();
                        long granted = System.nanoTime();
                        if (holdMs > 0) Thread.sleep(holdMs);
                        synchronized (lock) {
                            boolean handoff = last[1] >= 0 && last[1] != me && asked < last[0];
                            samples[me][i] = handoff ? granted - last[0] : -1;
                            last[0] = System.nanoTime();
                            last[1] = me;
                        }
                        m.release();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ts[t].start();
        }
        pause("WARM_DONE", 500);
        go.countDown();
        for (Thread t : ts) t.join();
        pause("BENCH_DONE", 500);
        long[] all = Arrays.stream(samples).flatMapToLong(Arrays::stream).filter(x -> x >= 0).toArray();
        result(all);
        for (CuratorFramework c : clients) c.close();
    }
}
