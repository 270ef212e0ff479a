#!/bin/sh
# Acquisitions/s, lockwright clients vs Lucene 4.10.4 clients, against the same verify server
# (`lockwright stress-run`, which counts acquisitions at the server from the starting gun to
# the last message, so JVM start-up is not counted). One run per cell, same machine.
#
# Usage: checks/tests/lucene/bench.sh [LOCKWRIGHT_BINARY] [COUNT] [SLEEP_MS]
# Needs java and Debian's liblucene4.10-java. Prints a Markdown table.
set -eu
BIN=${1:-target/release/lockwright}
COUNT=${2:-20000}
SLEEP=${3:-0}
rate() { # clients client-impl -> acquisitions/s
    "$BIN" stress-run --clients "$1" --count "$COUNT" --sleep-ms "$SLEEP" --client "$2" \
        --factory native --os ofd --json --quiet |
        python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["violations"]==0, d; print(round(d["acquisitions_per_sec"]))'
}
echo "| clients | lockwright acq/s | Lucene 4.10.4 acq/s | ratio lockwright/Lucene |"
echo "|---:|---:|---:|---:|"
for n in 2 4 8; do
    lw=$(rate "$n" lockwright)
    lu=$(rate "$n" lucene)
    ratio=$(python3 -c "print(f'{$lw/$lu:.2f}')")
    echo "| $n | $lw | $lu | $ratio |"
done
