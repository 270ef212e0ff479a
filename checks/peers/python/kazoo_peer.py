#!/usr/bin/python3
"""kazoo 2.8 Lock peer for lockwright's interop tests and benchmarks.

Run with Debian's /usr/bin/python3 (python3-kazoo). Modes, as CuratorPeer.java's:
  stress  CONNECT PATH VHOST VPORT ID COUNT SLEEP_MS   LockVerifyServer wire protocol
  hold    CONNECT PATH HOLD_MS                          "HELD <node> <session>", hold, release, "RELEASED"
  try     CONNECT PATH TIMEOUT_MS                       "ACQUIRED <node>" (then release) or "NOT_ACQUIRED"
  bench   CONNECT PATH N WARMUP PAUSE_MS                uncontended acquire+release latency
Env KAZOO_EXTRA_LOCK_PATTERNS="lock-" passes extra_lock_patterns=["lock-"] (Curator's and
lockwright's lock names), so kazoo waits for their holders.
"""
import os
import socket
import sys
import time

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout

EXTRA = [p for p in os.environ.get("KAZOO_EXTRA_LOCK_PATTERNS", "").split(",") if p]


def client(cs):
    zk = KazooClient(hosts=cs, timeout=4.0)
    zk.start(timeout=20)
    return zk


def new_lock(zk, path, ident):
    return zk.Lock(path, ident, extra_lock_patterns=EXTRA)


def say(s, b):
    s.sendall(bytes([b]))
    got = s.recv(1)
    if got != bytes([b]):
        raise SystemExit("verify server answered %r instead of echoing %d" % (got, b))


def stress(cs, path, vhost, vport, ident, count, sleep_ms):
    zk = client(cs)
    lock = new_lock(zk, path, "kazoo-%d" % ident)
    s = socket.create_connection((vhost, vport))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(bytes([ident]))
    if s.recv(1) != bytes([43]):
        raise SystemExit("expected 43 from the verify server")
    for i in range(count):
        lock.acquire()
        if i == 0:
            print("kazoo %d acquired %s/%s" % (ident, path, lock.node), flush=True)
        say(s, 1)
        if sleep_ms:
            time.sleep(sleep_ms / 1000.0)
        say(s, 0)
        lock.release()
    s.close()
    print("kazoo %d done %d" % (ident, count), flush=True)
    zk.stop()
    zk.close()


def hold(cs, path, hold_ms):
    zk = client(cs)
    lock = new_lock(zk, path, "kazoo-hold")
    lock.acquire()
    print("HELD %s/%s 0x%x" % (path, lock.node, zk.client_id[0]), flush=True)
    time.sleep(hold_ms / 1000.0)
    lock.release()
    print("RELEASED", flush=True)
    zk.stop()
    zk.close()


def try_acquire(cs, path, timeout_ms):
    zk = client(cs)
    lock = new_lock(zk, path, "kazoo-try")
    try:
        got = lock.acquire(timeout=timeout_ms / 1000.0)
    except LockTimeout:
        got = False
    if got:
        print("ACQUIRED %s/%s" % (path, lock.node), flush=True)
        lock.release()
    else:
        print("NOT_ACQUIRED", flush=True)
    zk.stop()
    zk.close()


def bench(cs, path, n, warm, pause_ms):
    zk = client(cs)
    lock = new_lock(zk, path, "kazoo-bench")
    for _ in range(warm):
        lock.acquire()
        lock.release()
    print("WARM_DONE", flush=True)
    time.sleep(pause_ms / 1000.0)
    lat = []
    for _ in range(n):
        t = time.perf_counter()
        lock.acquire()
        lock.release()
        lat.append(time.perf_counter() - t)
    print("BENCH_DONE", flush=True)
    time.sleep(pause_ms / 1000.0)
    blocks = [sorted(lat[b:b + 200])[100] for b in range(0, n - 199, 200)]
    lat.sort()
    best = min(blocks) if blocks else lat[n // 2]
    print("RESULT n=%d median_us=%d p99_us=%d max_us=%d best_block_median_us=%d" % (
        n, lat[n // 2] * 1e6, lat[min(n - 1, int(n * 0.99))] * 1e6, lat[-1] * 1e6, best * 1e6),
        flush=True)
    zk.stop()
    zk.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    mode = a[0] if a else ""
    if mode == "stress":
        stress(a[1], a[2], a[3], int(a[4]), int(a[5]), int(a[6]), int(a[7]))
    elif mode == "hold":
        hold(a[1], a[2], int(a[3]))
    elif mode == "try":
        try_acquire(a[1], a[2], int(a[3]))
    elif mode == "bench":
        bench(a[1], a[2], int(a[3]), int(a[4]), int(a[5]))
    else:
        raise SystemExit(__doc__)
