"""Drives the warm Python worker (ais-rt/src/tools/driver.py) directly, without ais: N calls of
`return n + 1`, back to back or GAP seconds apart, and prints the latency of a call (from
writing its request to reading its end frame), and the CPU time and page faults per call of the
worker and its children (from /proc, over the measured calls).

    python3 ais-rt/benches/python_worker_drive.py [DRIVER] [N] [GAP]

DRIVER defaults to the driver beside this crate, N to 300, GAP to 0. Note `cat /proc/loadavg`
next to any figure. ais starts the worker with LD_BIND_NOW=1; so does this."""

import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
driver = open(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../src/tools/driver.py")).read()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
gap = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
tmp = tempfile.mkdtemp(prefix="ais-drive-")
worker = subprocess.Popen(
    [sys.executable, "-X", "utf8", "-u", "-c", driver], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    env={"PATH": os.environ["PATH"], "TMPDIR": tmp, "LD_BIND_NOW": "1", "PYTHONIOENCODING": "utf-8"})
spec = json.dumps({"name": "inc", "params": ["n"], "body": "return n + 1"}).encode()


def read_exact(k):
    data = b""
    while len(data) < k:
        chunk = worker.stdout.read(k - len(data))
        if not chunk:
            raise SystemExit("the worker went away")
        data += chunk
    return data


def call(i):
    worker.stdin.write(spec + b"\n" + json.dumps({"n": i}).encode() + b"\n")
    worker.stdin.flush()
    result = b""
    while True:
        head = read_exact(5)
        payload = read_exact(struct.unpack(">I", head[1:])[0])
        if head[:1] == b"R":
            result += payload
        elif head[:1] == b"E":
            end = json.loads(payload)
            assert end.get("taken", True) and not end["dirty"], end
            assert json.loads(result) == {"ok": True, "value": i + 1}, result
            return


def usage():
    """(CPU ms, minor faults) of the worker and its reaped children so far."""
    f = open("/proc/%d/stat" % worker.pid).read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return sum(int(x) for x in f[11:15]) * 1000 / tick, int(f[7]) + int(f[8])


for i in range(20):
    call(i)
cpu0, faults0 = usage()
times = []
for i in range(n):
    if gap:
        time.sleep(gap)
    t = time.perf_counter()
    call(i)
    times.append((time.perf_counter() - t) * 1e3)
cpu1, faults1 = usage()
times.sort()
q = lambda f: times[int(f * (len(times) - 1))]  # noqa: E731
print("%d calls, gap %gs: min %.2f p10 %.2f median %.2f p90 %.2f mean %.2f ms; per call: %.2f ms CPU, "
      "%.0f page faults (worker and children); load %s" % (
          n, gap, times[0], q(.1), q(.5), q(.9), statistics.mean(times), (cpu1 - cpu0) / n,
          (faults1 - faults0) / n, open("/proc/loadavg").read().split()[0]))
worker.stdin.close()
worker.wait()
