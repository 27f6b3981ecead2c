#!/bin/sh
# The run's scale benchmark: `ais run` (release) on chains of 5,000 and 20,000 CODE steps over
# small integers, each step reading the previous one's carry; prints the wall time and the peak
# resident memory of each (GNU time's `-v`), journaled (the default) and with `--no-journal`.
# Goal (issue 15): the 20,000 chain within 4x the 5,000 chain's time and within 100 MB.
#
#   sh benches/run_scale.sh            # builds `ais` in release first
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin ais
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
    for mode in journal no-journal; do
        flag=""
        [ "$mode" = no-journal ] && flag="--no-journal"
        /usr/bin/time -v target/release/ais run "$work/chain-$n.agir" --task hello \
            --out "$work/out-$n-$mode" --max-steps $((n + 10)) $flag \
            > "$work/run-$n.txt" 2> "$work/time-$n.txt"
        secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time-$n.txt")
        kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time-$n.txt")
        echo "$n steps, $mode: $(head -1 "$work/run-$n.txt") | wall $secs | peak RSS $((kb / 1024)) MB"
    done
done
