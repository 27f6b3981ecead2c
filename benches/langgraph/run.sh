#!/usr/bin/env bash
# `ais run` against LangGraph on the same counter loop (one CODE and one ROUTE per iteration in
# ais; one node and one conditional edge in LangGraph), measured side by side in one run.
#
#   bash benches/langgraph/run.sh            # from the repository root, on a fresh machine
#
# Installs the pinned `langgraph` from PyPI into a virtual environment of its own
# (target/langgraph-venv, or $AIS_LANGGRAPH_VENV), builds `ais` in release, and prints the
# time per iteration of each and their ratio. Needs python3 with venv and cargo.
#   - ais: the whole `ais run` process, start-up removed by difference: (t(big) - t(1)) /
#     (big - 1) iterations, best of RUNS each.
#     Measured twice: with `--no-journal` (like for like: LangGraph's graph runs without a
#     checkpointer) and with the default SQLite journal (every step durable).
#   - LangGraph: `graph.invoke` in-process, the graph compiled once outside the timing, best
#     of RUNS.
set -euo pipefail

LANGGRAPH_VERSION=1.2.22
AIS_ITERATIONS=${AIS_ITERATIONS:-50000}
LG_ITERATIONS=${LG_ITERATIONS:-1000}
RUNS=${RUNS:-3}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${AIS_LANGGRAPH_VENV:-$root/target/langgraph-venv}

if ! "$venv/bin/python" -c "import langgraph, importlib.metadata as m; assert m.version('langgraph') == '$LANGGRAPH_VERSION'" 2>/dev/null; then
    echo "installing langgraph==$LANGGRAPH_VERSION into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "langgraph==$LANGGRAPH_VERSION"
fi

(cd "$root" && cargo build --release --quiet --bin ais)
ais="$root/target/release/ais"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The best wall time of RUNS runs of `ais run` counting to $1, in seconds; $2 and on are extra
# flags (`--no-journal`).
ais_time() {
    local n=$1
    shift
    sed "s/LIMIT/$n/" "$here/counter.agir.in" > "$work/counter_$n.agir"
    local best=""
    for _ in $(seq "$RUNS"); do
        local start end
        start=$(date +%s.%N)
        rm -rf "$work/.ais"
        "$ais" run "$work/counter_$n.agir" --task go --max-steps $((2 * n + 10)) --out "$work" "$@" > "$work/out.txt"
        end=$(date +%s.%N)
        grep -q "n: $n" "$work/out.txt" || { cat "$work/out.txt" >&2; exit 1; }
        best=$(python3 -c "import sys; t=$end-$start; b='$best'; print(t if not b else min(t, float(b)))")
    done
    echo "$best"
}

small=$(ais_time 1 --no-journal)
big=$(ais_time "$AIS_ITERATIONS" --no-journal)
jsmall=$(ais_time 1)
jbig=$(ais_time "$AIS_ITERATIONS")
lg=$("$venv/bin/python" "$here/counter.py" "$LG_ITERATIONS" "$RUNS")

python3 - "$small" "$big" "$jsmall" "$jbig" "$AIS_ITERATIONS" "$lg" "$LG_ITERATIONS" "$RUNS" <<'PY'
import sys
small, big, jsmall, jbig = (float(a) for a in sys.argv[1:5])
n, lg, lg_n, runs = int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
ais = (big - small) / (n - 1)
journaled = (jbig - jsmall) / (n - 1)
print(f"counter loop, best of {runs} runs each")
print(f"  ais run --no-journal  {ais * 1e6:10.3f} µs per iteration  ({n} iterations; start-up {small * 1e3:.1f} ms removed)")
print(f"  ais run (journaled)   {journaled * 1e6:10.3f} µs per iteration  (SQLite journal, start-up {jsmall * 1e3:.1f} ms removed)")
print(f"  LangGraph             {lg * 1e6:10.3f} µs per iteration  ({lg_n} iterations of graph.invoke, no checkpointer)")
print(f"  ratio, like for like  {lg / ais:10.0f}x  (ais --no-journal vs LangGraph without a checkpointer)")
print(f"  ratio, journaled      {lg / journaled:10.0f}x")
PY
