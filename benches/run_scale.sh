#!/bin/sh
# The run's scale benchmark: `ais run` (release) on chains of 5,000 and 20,000 CODE steps over
# small integers, each step reading the previous one's carry, journaled (the default) and with
# `--no-journal`. Each case runs RUNS times (default 5); the times are the best of them (the
# least disturbed by other processes on a shared machine): wall time (the clock around the run)
# and CPU time (user + system, GNU time's `-v`); the peak resident memory is the highest.
# Goal (issue 15): the 20,000 chain within 4x the 5,000 chain's time and within 100 MB.
# The script prints the ratios, whether each goal is met, and the machine's load.
#
#   sh benches/run_scale.sh            # builds `ais` in release first
#   RUNS=9 sh benches/run_scale.sh
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin ais
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "load before: $(cat /proc/loadavg)"
for n in 5000 20000; do
    python3 - "$n" > "$work/chain-$n.agir" <<'PY'
import sys
n = int(sys.argv[1])
print("walker:\n  carries:\n    task: {type: str, role: input}")
for i in range(n):
    print(f"    c{i}: {{type: int, produced_by: s{i}}}")
print("nodes:")
print('  - {id: s0, type: CODE, owner: code, reads: [task], writes: [c0], body: "len(task)"}')
for i in range(1, n):
    print(f'  - {{id: s{i}, type: CODE, owner: code, reads: [c{i-1}], writes: [c{i}], body: "c{i-1} + 1"}}')
print(f"  - {{id: done, type: TERMINAL, reads: [c{n-1}]}}")
print("edges:")
for i in range(1, n):
    print(f"  - {{from: s{i-1}, to: s{i}}}")
print(f"  - {{from: s{n-1}, to: done}}")
PY
done
# One case, RUNS times: the best wall and CPU seconds and the highest peak RSS (kB).
measure() {
    n=$1 mode=$2 flag=""
    [ "$mode" = no-journal ] && flag="--no-journal"
    : > "$work/best-$n-$mode"
    i=0
    while [ "$i" -lt "$runs" ]; do
        rm -rf "$work/out"
        t0=$(date +%s%N)
        /usr/bin/time -v target/release/ais run "$work/chain-$n.agir" --task hello \
            --out "$work/out" --max-steps $((n + 10)) $flag \
            > "$work/run.txt" 2> "$work/time.txt"
        t1=$(date +%s%N)
        head -1 "$work/run.txt" | grep -q "ok after $((n + 1)) steps" || {
            echo "the $n chain ($mode) did not run to its end:" >&2
            cat "$work/run.txt" "$work/time.txt" >&2
            exit 1
        }
        # Wall time from the clock around the run (GNU time's is in hundredths of a second).
        awk -F': ' -v ns=$((t1 - t0)) '
            /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { m = $2 }
            END { printf "%.3f %.2f %d\n", ns / 1e9, u + s, m }' "$work/time.txt" >> "$work/best-$n-$mode"
        i=$((i + 1))
    done
    awk 'NR == 1 || $1 < w { w = $1 } NR == 1 || $2 < c { c = $2 } NR == 1 || $3 > m { m = $3 }
         END { printf "%.3f %.3f %d\n", w, c, m }' "$work/best-$n-$mode"
}
status=0
for mode in journal no-journal; do
    set -- $(measure 5000 "$mode")
    w5=$1 c5=$2 m5=$3
    set -- $(measure 20000 "$mode")
    w20=$1 c20=$2 m20=$3
    echo "5000 steps, $mode: wall ${w5} s | cpu ${c5} s | peak RSS $((m5 / 1024)) MB ($m5 kB)"
    echo "20000 steps, $mode: wall ${w20} s | cpu ${c20} s | peak RSS $((m20 / 1024)) MB ($m20 kB)"
    verdict=$(awk -v w5="$w5" -v w20="$w20" -v c5="$c5" -v c20="$c20" -v m="$m20" 'BEGIN {
        r = w20 / w5; rc = (c5 > 0) ? c20 / c5 : 0
        printf "  ratio 20000/5000: wall %.2fx (goal <= 4: %s), cpu %.2fx | 20000 peak RSS %.1f MB (goal <= 100: %s)\n",
            r, (r <= 4 ? "met" : "NOT met"), rc, m / 1024, (m <= 100 * 1024 ? "met" : "NOT met")
        exit (r <= 4 && m <= 100 * 1024) ? 0 : 1 }') || status=1
    echo "$verdict"
done
echo "load after: $(cat /proc/loadavg) (best of $runs runs per case)"
exit $status
