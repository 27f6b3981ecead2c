# The warm Python worker that runs tool bodies for ais (ais-rt/src/tools/python.rs).
#
# The worker is started once (per run, per working directory) and serves calls one at a time.
# Requests: two JSON lines on stdin: the tool, {"name", "params" (list or null), "body"}, then
# the call's arguments, an object. Each call runs in a child forked from the worker, in fresh
# globals, and exits; nothing a call changes (globals, imported modules' state, the working
# directory, the environment, files in its TMPDIR) survives it, because the worker itself never
# runs tool code. The child is forked ahead of its call (the "spare"): calls back to back, as
# soon as the worker has handed a call its request it forks the spare for the next one, which
# sets itself up while that call runs (else once the call has ended), then waits on a pipe for
# its request (its TMPDIR's path, then the request).
# So a spare may exist while tool code runs; python_worker.rs argues why nothing that code can
# do reaches it (in short: the worker holds nothing of any call when it forks, a spare changed
# or killed from outside never takes a request, and the TMPDIR is prepared while no tool code
# runs). The worker lowers and compiles each tool's body once (that runs no tool code) and the
# spares inherit the code object.
# Frames on the worker's ORIGINAL stdout, each a tag byte, a 4-byte big-endian length and the
# payload:
#   b"O" <bytes>   what the call printed (its stdout and stderr, merged), as it comes;
#   b"R" <bytes>   the call's result, as it comes (ais joins the frames): {"ok": true,
#                  "value": ...} or {"ok": false, "error": "...", "traceback": "..."} (none:
#                  none was written);
#   b"E" <json>    the end of the call: {"status": raw wait status, "dirty": bool, "taken":
#                  bool}; "dirty" when the call left processes behind (killed) or changed the
#                  worker's limits or scheduling (ais then retires the worker); "taken" false
#                  when the spare died before it took the request (no tool code ran; ais asks
#                  again).
# The call's output is read until its pipes close, or 250 ms after it exited (a background
# process holding them cannot stall a finished call).
#
# The body is lowered the way the reference implementation lowers it, so programs written for
# it run unchanged:
#   - it becomes the body of `def __ais_impl(p1=None, p2=None, ...)` over the tool's parameters
#     (an `if __name__ == "__main__":` harness is stripped first);
#   - a body made only of imports, docstrings and `def`s is a complete function: it is called,
#     choosing `run` if defined, else the LAST def (helpers come above their caller), with each
#     of its parameters given the argument of the same name, or None;
#   - a body that is not Python but looks like a shell script runs under bash; any other
#     non-Python body is returned as a string (a template or asset).
#
# First of all, the worker makes itself non-dumpable (PR_SET_DUMPABLE 0: `execve` reset the
# flag the runtime set on itself), so no process of the same user (a call it forks and that
# call's programs included) can ptrace it or read its /proc/<pid>/mem or environ; the calls'
# children inherit the flag across fork. A worker that cannot do that does not serve.
import ctypes

if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE = 4
    import os as _os
    _os.write(2, b"ais python worker: prctl(PR_SET_DUMPABLE, 0) failed: %s\n"
              % _os.strerror(ctypes.get_errno()).encode())
    _os._exit(70)

import ast
import json
import keyword
import os
import sys

# ais starts the worker with LD_BIND_NOW (so that every call's child finds the interpreter's
# symbols bound, not binding them itself); the calls' own programs do not inherit it.
os.environ.pop("LD_BIND_NOW", None)
import textwrap
import traceback

# Bound before any body runs: a body replacing json.dumps, os.write or os._exit cannot garble
# how its result is sent.
_WRITEV, _EXIT = os.writev, os._exit
# json's C encoder and scanner, made once (json.dumps and json.loads make or wrap them in
# Python on every call): what JSONEncoder(ensure_ascii=False).encode and json.loads do for the
# objects and the one-line JSON that cross here.
_ITERENCODE = json.encoder.c_make_encoder(
    {}, json.JSONEncoder().default, json.encoder.encode_basestring, None, ": ", ", ", False,
    False, True) if json.encoder.c_make_encoder else None
_SCAN = json.decoder.JSONDecoder().scan_once


def _encode(obj):
    if _ITERENCODE is None:
        return json.JSONEncoder(ensure_ascii=False).encode(obj)
    return "".join(_ITERENCODE(obj, 0))

_SHELL_CLIS = ["pandoc", "soffice", "libreoffice", "qpdf", "pdftoppm", "pdfimages",
               "pdftotext", "tesseract", "pnpm", "npm ", "npx", "create-vite", "bash ", "sh ",
               "cp ", "mv ", "tar ", "mkdir ", "rm ", "convert ", "gs ", "./"]
_PY_OPENERS = ["def ", "import ", "from ", "class ", "return ", "if ", "for ", "with "]


def _safe(name):
    if name.isascii() and name.isidentifier() and name[0] != "_" and name[-1] != "_" \
            and not keyword.iskeyword(name):
        return name  # what the rest would make of it
    import re
    r = re.sub(r"[^0-9a-zA-Z_]", "_", str(name)).strip("_") or "_arg"
    if r[0].isdigit():
        r = "_" + r
    if keyword.iskeyword(r):
        r = r + "_"
    return r


def _py_ok(code):
    try:
        ast.parse("def _f():\n" + textwrap.indent(code, "    "))
        return True
    except SyntaxError:
        return False


def _first_line(body):
    for ln in body.splitlines():
        s = ln.strip()
        if s and not s.startswith("#"):
            return s
    return ""


def _looks_shell(body):
    for ln in body.splitlines():
        s = ln.strip()
        if s and not s.startswith("#") and any(s.startswith(c) for c in _SHELL_CLIS):
            return True
    return False


def _looks_python(body):
    first = _first_line(body)
    if any(first.startswith(k) for k in _PY_OPENERS):
        return True
    if first.startswith("@"):
        return any(ln.strip().startswith(("def ", "class ")) for ln in body.splitlines())
    return False


def _strip_main_guard(body):
    import re
    guard = re.compile(r"^\s*if\s+__name__\s*==\s*['\"]__main__['\"]\s*:")
    lines = body.splitlines()
    out, i = [], 0
    while i < len(lines):
        if guard.match(lines[i]):
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i][:1] in (" ", "\t")):
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out).rstrip()


def _delegating_call(body, params):
    tree = ast.parse(body)
    cands = []
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cands.append(st)
        elif isinstance(st, (ast.Import, ast.ImportFrom, ast.Expr)):
            continue
        else:
            return ""
    if not cands:
        return ""
    pick = cands[-1]
    for c in cands:
        if c.name == "run":
            pick = c
    inner = [a.arg for a in pick.args.posonlyargs + pick.args.args]
    call = ", ".join(_safe(a) if _safe(a) in params else "None" for a in inner)
    if isinstance(pick, ast.AsyncFunctionDef):
        return "    import asyncio as __ais_asyncio\n    return __ais_asyncio.run(%s(%s))" % (pick.name, call)
    return "    return %s(%s)" % (pick.name, call)


def _lower(name, body, params):
    body = textwrap.dedent(body).rstrip()
    if not body.strip():
        raise ValueError("tool `%s` has an empty body" % name)
    header = "def __ais_impl(%s):" % ", ".join(p + "=None" for p in params)
    if _py_ok(body):
        body = _strip_main_guard(body)
        lines = [("    " + ln) if ln.strip() else "" for ln in body.splitlines()]
        tail = _delegating_call(body, params)
        if tail:
            lines.append(tail)
        if not any(ln.strip() for ln in lines):
            lines.append("    return None")
        return header + "\n" + "\n".join(lines) + "\n"
    if _looks_shell(body):
        script = "\n".join(s.strip() for s in body.splitlines() if s.strip() and not s.strip().startswith("#"))
        return (header + "\n    return __ais_shell(%r)\n") % script
    if _looks_python(body):
        try:
            ast.parse(body)
        except SyntaxError as e:
            raise SyntaxError("tool `%s`: its Python body does not parse: %s (line %s)" % (name, e.msg, e.lineno))
        raise SyntaxError("tool `%s`: its Python body does not parse as a function body" % name)
    return header + "\n    return %r\n" % body


def __ais_shell(script):
    import shutil
    import subprocess
    r = subprocess.run(script, shell=True, capture_output=True, text=True,
                       executable=shutil.which("bash") or "/bin/sh")
    sys.stderr.write(r.stderr or "")
    if r.returncode != 0:
        sys.stderr.write(r.stdout or "")
        raise RuntimeError("shell body exited with status %d" % r.returncode)
    return r.stdout


def _jsonable(v, depth=0):
    import math
    if depth > 200:
        raise ValueError("the result nests deeper than 200 levels")
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): _jsonable(x, depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x, depth + 1) for x in v]
    if isinstance(v, (set, frozenset)):
        return [_jsonable(x, depth + 1) for x in sorted(v, key=repr)]
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    if hasattr(v, "_asdict"):
        return _jsonable(v._asdict(), depth + 1)
    if hasattr(v, "__dataclass_fields__"):
        import dataclasses
        return _jsonable(dataclasses.asdict(v), depth + 1)
    return str(v)


def _emit(obj, code):
    _send(3, _encode(obj).encode("utf-8"))
    sys.stdout.flush()
    sys.stderr.flush()
    _EXIT(code)


def _main(spec_line, args_line, g):
    """Runs the call `spec_line` + `args_line` in the globals `g`; returns its value."""
    args = _SCAN(args_line.decode("utf-8"), 0)[0] or {}
    hit = _CODE.get(spec_line)
    if hit is not None:
        name, params, code = hit
    else:
        spec = json.loads(spec_line)
        name = spec["name"]
        params = [_safe(p) for p in (spec.get("params") if spec.get("params") is not None else list(args))]
        code = compile(_lower(name, spec["body"], params), "<tool %s>" % name, "exec")
    kwargs = {}
    for k, v in args.items():
        k = _safe(k)
        if k in params:
            kwargs[k] = v
    exec(code, g)
    return g["__ais_impl"](**kwargs)


# A request's spec line -> (name, parameters, code object of the lowered body), or None when
# each call lowers the body itself (no signature: the parameters are each call's arguments; or
# a body that does not lower, whose error each call reports). Lowering and compiling run no
# tool code, so the worker does them once per tool, and every call's child inherits the result.
_CODE = {}
_CODE_KEPT = 256


def _precompile(spec_line):
    """Lowers and compiles a tool's body into the worker's cache, for the tool's calls to come."""
    if spec_line in _CODE or len(_CODE) >= _CODE_KEPT:
        return
    entry = None
    try:
        spec = json.loads(spec_line)
        if spec.get("params") is not None:
            name, params = spec["name"], [_safe(p) for p in spec["params"]]
            entry = (name, params, compile(_lower(name, spec["body"], params), "<tool %s>" % name, "exec"))
    except Exception:  # noqa: BLE001 - each call lowers it again and reports why
        entry = None
    _CODE[spec_line] = entry




def _call(spec_line, args_line):
    """Runs one call in the forked child (its result channel is descriptor 3); never returns."""
    sys.stdout, sys.stderr = _STDOUT, _STDERR
    try:
        value = _main(spec_line, args_line, _GLOBALS)
    except SystemExit as e:
        _emit({"ok": False, "error": "SystemExit: the tool called exit(%r)" % (e.code,),
               "traceback": ""}, 1)
    except BaseException as e:  # noqa: BLE001 - every failure of the tool is reported
        _emit({"ok": False, "error": "%s: %s" % (type(e).__name__, e),
               "traceback": traceback.format_exc()}, 1)
    try:
        _emit({"ok": True, "value": _jsonable(value)}, 0)
    except BaseException as e:  # noqa: BLE001
        _emit({"ok": False, "error": "the result could not be sent as JSON: %s: %s" % (type(e).__name__, e),
               "traceback": traceback.format_exc()}, 1)


# ---- the worker -------------------------------------------------------------------------

import _random  # noqa: E402
import errno  # noqa: E402
import gc  # noqa: E402
import mmap  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import _signal  # noqa: E402 - the C module: plain numbers, no enum conversion per call
import struct  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import csv, glob, math, re, subprocess  # noqa: E401,E402 - imported once, for every call
import random  # noqa: E402 - tempfile's, already

# What a call's globals start with (the body's ambient imports). The worker never uses this
# dict itself: each call's child finds it, as it was, in its own copy of the worker's memory.
_GLOBALS = {"__name__": "__ais_tool__", "__builtins__": __builtins__, "os": os, "sys": sys,
            "json": json, "_json": json, "re": re, "csv": csv, "glob": glob, "_glob": glob,
            "math": math, "shutil": shutil, "subprocess": subprocess, "_subprocess": subprocess,
            "tempfile": tempfile, "__ais_shell": __ais_shell}

_LIBC = ctypes.CDLL(None, use_errno=True)


def _forker():
    """How the worker forks a spare, and whether it must re-seed `random` for it. `os.fork` runs
    the interpreter's after-fork handlers in the child (threading's, random's, ...): in a
    single-threaded CPython with the GIL they re-make locks no thread holds and re-seed
    `random`, and they were half of the memory a call's child copied from the worker. So such a
    worker calls libc's fork itself (holding the GIL) and re-seeds `random` just before each
    fork: each child gets a state of its own, which the worker overwrites before it forks the
    next. Any other worker keeps `os.fork`."""
    import threading
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    if sys.implementation.name != "cpython" or not gil or threading.active_count() != 1 \
            or len(os.listdir("/proc/self/task")) != 1:
        return os.fork, False
    fork = ctypes.PyDLL(None, use_errno=True).fork
    fork.argtypes, fork.restype = [], ctypes.c_int
    return fork, True


def _reseed():
    """What random's after-fork handler does: a new seed for the module's generator."""
    _random.Random.seed(random._inst, None)
    random._inst.gauss_next = None


_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_DRAIN_AFTER_EXIT = 0.25
_BACK_TO_BACK = 0.005  # a request within this long of the worker's being ready comes back to back
_MAX_FD = os.sysconf("SC_OPEN_MAX")
_TAKEN = b"+"  # the first byte a spare writes on its result channel: it took the request
_STDOUT = _STDERR = None  # a call's sys.stdout and sys.stderr, made once by the worker


_ZEROS = memoryview(bytes(1 << 16))


def _private(size):
    """A buffer for call data: memory the worker's children do not get (MADV_DONTFORK), so a
    call's child finds none of it, and the worker's writes to it copy no page; wiped after use
    all the same."""
    buf = mmap.mmap(-1, size)
    try:
        buf.madvise(mmap.MADV_DONTFORK)
    except (AttributeError, OSError):
        pass  # wiping is what remains
    return buf


def _wipe(buf, end, start=0):
    """Zeroes bytes `start`..`end` of the buffer `buf`."""
    with memoryview(buf) as view:
        while start < end:
            n = min(end - start, len(_ZEROS))
            view[start:start + n] = _ZEROS[:n]
            start += n


def _send(fd, *parts):
    """Writes every byte of `parts` (bytes-like) to `fd`."""
    views = [memoryview(p) for p in parts]
    while views:
        n = _WRITEV(fd, views)
        while views and n >= len(views[0]):
            n -= len(views[0])
            views.pop(0)
        if views and n:
            views[0] = views[0][n:]


def _frame(fd, tag, data):
    _send(fd, tag + struct.pack(">I", len(data)), data)


def _read_all(fd):
    chunks = []
    while True:
        data = os.read(fd, 65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


class _Requests:
    """The worker's standard input: requests are read into one buffer, handed to the spare
    from it and wiped from it, so no copy of a call's arguments is left in the worker's memory
    (freed memory is not cleared) for a spare forked later to find; and the buffer is not
    mapped in the spares at all."""

    def __init__(self, fd):
        self.fd, self.buf, self.filled = fd, _private(1 << 16), 0

    def next(self):
        """The next request, as (the end of its tool line, its end) in `buf`; None at EOF."""
        while True:
            i = self.buf.find(b"\n", 0, self.filled)
            j = self.buf.find(b"\n", i + 1, self.filled) if i >= 0 else -1
            if j >= 0:
                return i, j + 1
            if self.filled == len(self.buf):
                bigger = _private(2 * len(self.buf))
                bigger[:self.filled] = memoryview(self.buf)[:self.filled]
                _wipe(self.buf, self.filled)
                self.buf.close()
                self.buf = bigger
            with memoryview(self.buf) as view:
                n = os.readv(self.fd, [view[self.filled:]])
            if n == 0:
                return None
            self.filled += n

    def drop(self, end):
        """Forgets (and wipes) the request that ends at `end`."""
        rest = self.filled - end
        if rest:
            with memoryview(self.buf) as view:
                view[:rest] = view[end:self.filled]
        _wipe(self.buf, self.filled, rest)
        self.filled = rest


_RELAYED = _private(1 << 16)  # what a call prints and returns passes through here, and is wiped


def _relay(frames, spare):
    """Relays the call's output (O frames) and result (R frames) as they come, through
    `_RELAYED`; returns (whether the spare took the request, its wait status)."""
    pid, _, out_r, res_r, pidfd = spare
    poll = select.poll()
    for fd in (out_r, res_r, pidfd):
        poll.register(fd, select.POLLIN)
    pipes, status, deadline, taken, used = 2, None, None, None, 0
    view = memoryview(_RELAYED)
    while pipes:
        timeout = None if deadline is None else max(0.0, (deadline - time.monotonic()) * 1000)
        ready = poll.poll(timeout)
        if not ready and deadline is not None:
            break
        for fd, _ in ready:
            if fd == pidfd:
                _, status = os.waitpid(pid, 0)
                poll.unregister(pidfd)
                deadline = time.monotonic() + _DRAIN_AFTER_EXIT
                continue
            n = os.readv(fd, [view])
            if n == 0:
                poll.unregister(fd)
                pipes -= 1
                continue
            used = max(used, n)
            start, tag = 0, b"O"
            if fd == res_r:
                if taken is None:
                    taken, start = view[0] == _TAKEN[0], 1
                if not taken:
                    continue
                tag = b"R"
            if n > start:
                _frame(frames, tag, view[start:n])
    if status is None:
        _, status = os.waitpid(pid, 0)
    view.release()
    _wipe(_RELAYED, used)
    for fd in (out_r, res_r, pidfd):
        os.close(fd)
    return bool(taken), status


def _own_files():
    """Descriptors on this process's /proc/self/limits and /proc/self/cgroup, for
    `_attributes`."""
    return tuple(os.open(f, os.O_RDONLY | os.O_CLOEXEC) for f in ("/proc/self/limits",
                                                                  "/proc/self/cgroup"))


def _attributes(files):
    """What another process of the same user can change about this one from outside, and a call
    would see: its resource limits and control group (`files`, from `_own_files`), nice value,
    scheduling policy and CPU affinity."""
    return (tuple(os.pread(fd, 8192, 0) for fd in files), os.getpriority(os.PRIO_PROCESS, 0),
            os.sched_getscheduler(0), os.sched_getaffinity(0))


def _children():
    """The worker's children (from a descriptor kept open on its /proc children file)."""
    size = 4096
    while True:
        data = os.pread(_CHILDREN_FD, size, 0)
        if len(data) < size:
            return [int(k) for k in data.split()]
        size *= 4


def _leftovers(spare):
    """Kills and reaps every process the call left behind (orphans come to this subreaper:
    every child but the next call's spare); True when there was any."""
    dirty = False
    while True:
        kids = [k for k in _children() if k != spare]
        if not kids:
            return dirty
        dirty = True
        for k in kids:
            try:
                os.kill(k, _signal.SIGKILL)
            except OSError:
                pass
        for k in kids:
            try:
                os.waitpid(k, 0)
            except ChildProcessError:
                pass


_WARM = (b'{"name": "__warm__", "params": [], "body": "return None"}', b"{}")


def _warm():
    """Runs a trivial call's path (the driver's own tool, no tool code) in globals of its own:
    in the worker, once, so that the caches a call fills (types' method cache, say) are filled
    in memory the calls' children then only read; in a spare forked while the worker would
    otherwise wait, so that the pages a call writes are copied before the call comes, not while
    it runs. (A spare forked beside a running call is not warmed: calls back to back, that only
    moved the copying and cost a trivial call's work per call.)"""
    try:
        _encode({"ok": True, "value": _jsonable(_main(*_WARM, dict(_GLOBALS)))}).encode("utf-8")
    except Exception:  # noqa: BLE001
        pass


def _fork_spare(warm=False):
    """Forks the child that will run the next call, before that call is asked for: it sets
    itself up (`warm`: and warms up, see `_warm`) and waits for its request on a pipe of its
    own, so a call pays no fork.
    Returns (pid, request pipe, output pipe, result pipe, pidfd)."""
    req_r, req_w = os.pipe()
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()
    gc.freeze()  # the worker's objects: a collection in the call need not touch (and copy) them
    worker = os.getpid()
    if _RESEED:
        _reseed()  # for this child alone: the next fork overwrites it first
    try:
        pid = _FORK()
        if pid < 0:  # libc's fork
            raise OSError(ctypes.get_errno(), "fork failed")
    except OSError:
        for fd in (req_r, req_w, out_r, out_w, res_r, res_w):
            os.close(fd)
        raise
    if pid == 0:
        try:
            # While it waits, a signal sent to it (by a call running beside it) either kills it,
            # stops it (the worker continues it before handing it a request) or does nothing:
            # none is left pending for Python to act on in the call it takes later.
            _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
            _LIBC.prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
            if os.getppid() != worker:
                os._exit(0)  # the worker died before the parent-death signal was armed
            os.dup2(req_r, 0)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.dup2(res_w, 3, inheritable=False)
            # Every other descriptor is the worker's: its frames to ais, the other pipe ends.
            os.closerange(4, _MAX_FD)
            own = _own_files()
            if warm:
                _warm()
                _attributes(own)
            request = _read_all(0)
            tmp, _, request = request.partition(b"\n")
            spec_line, _, args_line = request.partition(b"\n")
            if not args_line or _attributes(own) != _ATTRIBUTES:
                os._exit(0)  # the worker went away, or something changed this process
            for fd in own:
                os.close(fd)
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            if tmp + b"\n" != _TMP.line:  # made after this spare was forked
                tmp = os.fsdecode(tmp)
                os.environ["TMPDIR"] = tmp
                tempfile.tempdir = tmp
            os.write(3, _TAKEN)
            _call(spec_line, args_line)
        finally:
            os._exit(70)
    for fd in (req_r, out_w, res_w):
        os.close(fd)
    return pid, req_w, out_r, res_r, os.pidfd_open(pid)


class _Tmp:
    """The calls' TMPDIR: a directory of the worker's own beneath its TMPDIR, made and checked
    while no tool code runs. A call that leaves it as it found it (the same directory, mode and
    owner, no entries, no extended attributes) passes it on to the next call; otherwise it is
    removed and the next call gets a new one (a name taken already, by whatever made it, is
    passed over)."""

    def __init__(self, base):
        self.base, self.serial = base, 0
        self._make()

    def _make(self):
        while True:
            self.serial += 1
            path = os.path.join(self.base, "call-%d-%d" % (os.getpid(), self.serial))
            try:
                os.mkdir(path, 0o700)
                break
            except FileExistsError:
                continue
        self.path, self.line = path, os.fsencode(path) + b"\n"
        st = os.lstat(path)
        self.made = (st.st_ino, st.st_dev, st.st_mode, st.st_uid)
        os.environ["TMPDIR"] = path  # the spares inherit it (a spare forked before is told)
        tempfile.tempdir = path

    def _untouched(self):
        try:
            st = os.lstat(self.path)
            if (st.st_ino, st.st_dev, st.st_mode, st.st_uid) != self.made:
                return False
            try:
                if os.listxattr(self.path, follow_symlinks=False):
                    return False
            except OSError as e:
                if e.errno != errno.ENOTSUP:
                    return False
            with os.scandir(self.path) as entries:
                return next(entries, None) is None
        except OSError:
            return False

    def after_call(self):
        """Passes the directory on if the call left it untouched, else replaces it."""
        if not self._untouched():
            shutil.rmtree(self.path, ignore_errors=True)
            self._make()


def _serve():
    global _STDOUT, _STDERR, _CHILDREN_FD, _OWN, _ATTRIBUTES, _TMP, _FORK, _RESEED
    frames = os.dup(1)
    os.dup2(2, 1)
    _STDOUT = open(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    _STDERR = open(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _CHILDREN_FD = os.open("/proc/self/task/%d/children" % os.getpid(), os.O_RDONLY | os.O_CLOEXEC)
    _OWN = _own_files()
    _ATTRIBUTES = _attributes(_OWN)
    _TMP = _Tmp(os.environ.get("TMPDIR") or tempfile.gettempdir())
    requests = _Requests(0)
    _FORK, _RESEED = _forker()
    _precompile(_WARM[0])
    _warm()
    # What else a spare does first (harmless here: an empty flush, a handler already set), so
    # that the caches it fills are the worker's too.
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    _STDOUT.flush()
    _STDERR.flush()
    spare = _fork_spare()
    while True:
        ready = time.monotonic()
        got = requests.next()
        if got is None:
            os._exit(0)
        # Calls back to back (this request came at once): the next call's spare is forked as
        # soon as this one has its request, beside it; otherwise once it has ended, while the
        # worker would wait anyway (a fork before the relay would delay this call's answer).
        beside = time.monotonic() - ready < _BACK_TO_BACK
        spec_end, end = got
        spec_line = bytes(requests.buf[:spec_end])  # the tool (its code), not the arguments
        pid, req_w = spare[0], spare[1]
        with memoryview(requests.buf) as view:
            try:
                os.kill(pid, _signal.SIGCONT)
                _send(req_w, _TMP.line, view[:end])
            except OSError:
                pass  # it died waiting: it took nothing, ais asks again
        os.close(req_w)
        requests.drop(end)
        _precompile(spec_line)
        # Forked now or later, the worker holds nothing of any call when it forks (the request
        # is wiped, the last call's output and result were), and while a call runs beside the
        # spare nothing the call can do reaches it unnoticed (see python_worker.rs).
        running, spare = spare, None
        if beside:
            try:
                spare = _fork_spare()
            except OSError:
                pass  # no fork now (no memory, too many processes): after the call, then
        taken, status = _relay(frames, running)
        dirty = _leftovers(spare[0] if spare else None) or _attributes(_OWN) != _ATTRIBUTES
        _frame(frames, b"E", b'{"status": %d, "dirty": %s, "taken": %s}' % (
            status, b"true" if dirty else b"false", b"true" if taken else b"false"))
        if spare is None:
            spare = _fork_spare(warm=True)
        _TMP.after_call()


_serve()
