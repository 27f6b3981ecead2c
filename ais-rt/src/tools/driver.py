# The warm Python worker that runs tool bodies for ais (ais-rt/src/tools/python.rs).
#
# The worker is started once (per run, per working directory) and serves calls one at a time.
# Requests: two JSON lines on stdin: the tool, {"name", "params" (list or null), "body"}, then
# the call's arguments, an object. Each call runs in a child forked from the worker, in fresh
# globals, and exits; nothing a call changes (globals, imported modules' state, the working
# directory, the environment, files in its TMPDIR) survives it, because the worker itself never
# runs tool code. The child is forked ahead of its call (the "spare", forked once the previous
# call and everything it left are gone, so no tool code runs while a spare exists): it sets
# itself up and warms up on the worker's own code, then waits on a pipe for its request. The
# worker lowers and compiles each tool's body once (that runs no tool code) and the spares
# inherit the code object.
# Frames on the worker's ORIGINAL stdout, each a tag byte, a 4-byte big-endian length and the
# payload:
#   b"O" <bytes>   what the call printed (its stdout and stderr, merged), as it comes;
#   b"R" <json>    the call's result, {"ok": true, "value": ...} or
#                  {"ok": false, "error": "...", "traceback": "..."} (empty: none was written);
#   b"E" <json>    the end of the call: {"status": raw wait status, "dirty": bool}; "dirty"
#                  when the call left processes behind (killed; ais then retires the worker).
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
import os
import sys
import textwrap
import traceback

_RESULT = None  # the call's result channel, set in the call's child
_DUMPS = json.dumps  # bound before any body runs: a body replacing json.dumps cannot garble its result

_SHELL_CLIS = ["pandoc", "soffice", "libreoffice", "qpdf", "pdftoppm", "pdfimages",
               "pdftotext", "tesseract", "pnpm", "npm ", "npx", "create-vite", "bash ", "sh ",
               "cp ", "mv ", "tar ", "mkdir ", "rm ", "convert ", "gs ", "./"]
_PY_OPENERS = ["def ", "import ", "from ", "class ", "return ", "if ", "for ", "with "]


def _safe(name):
    import re
    r = re.sub(r"[^0-9a-zA-Z_]", "_", str(name)).strip("_") or "_arg"
    if r[0].isdigit():
        r = "_" + r
    import keyword
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
    _RESULT.write(_DUMPS(obj, ensure_ascii=False))
    _RESULT.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _main(spec_line, args_line):
    args = json.loads(args_line) or {}
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
        if _safe(k) in params:
            kwargs[_safe(k)] = v
    import csv, glob, math, re, shutil, subprocess, tempfile  # noqa: E401 - the body's ambient imports
    g = {"__name__": "__ais_tool__", "__builtins__": __builtins__, "os": os, "sys": sys,
         "json": json, "_json": json, "re": re, "csv": csv, "glob": glob, "_glob": glob,
         "math": math, "shutil": shutil, "subprocess": subprocess, "_subprocess": subprocess,
         "tempfile": tempfile, "__ais_shell": __ais_shell}
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


def _call(spec_line, args_line, result_fd):
    """Runs one call in the forked child; never returns."""
    global _RESULT
    _RESULT = os.fdopen(result_fd, "w", encoding="utf-8")
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    try:
        value = _main(spec_line, args_line)
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

import gc  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import struct  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import csv, glob, math, re, subprocess  # noqa: E401,E402,F401 - imported once, for every call

_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_DRAIN_AFTER_EXIT = 0.25
_MAX_FD = os.sysconf("SC_OPEN_MAX")
_TAKEN = b"+"  # the first byte a spare writes on its result channel: it took the request


def _frame(fd, tag, data):
    _write_all(fd, tag + struct.pack(">I", len(data)) + data)


def _children():
    kids = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/children" % tid) as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def _reap_leftovers():
    """Kills and reaps every process the call left behind (orphans come to this subreaper);
    True when there was any."""
    dirty = False
    while True:
        kids = _children()
        if not kids:
            return dirty
        dirty = True
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        for k in kids:
            try:
                os.waitpid(k, 0)
            except ChildProcessError:
                pass


def _relay(frames, pid, out_r, res_r):
    """Relays the call's output as it comes and collects its result; returns (result, status)."""
    result = bytearray()
    status = None
    deadline = None
    pidfd = os.pidfd_open(pid)
    watch = {out_r, res_r, pidfd}
    while out_r in watch or res_r in watch:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select(list(watch), [], [], timeout)
        if not ready and deadline is not None:
            break
        for fd in ready:
            if fd == pidfd:
                _, status = os.waitpid(pid, 0)
                watch.discard(pidfd)
                deadline = time.monotonic() + _DRAIN_AFTER_EXIT
                continue
            data = os.read(fd, 65536)
            if not data:
                watch.discard(fd)
            elif fd == out_r:
                _frame(frames, b"O", data)
            else:
                result += data
    if status is None:
        _, status = os.waitpid(pid, 0)
    os.close(pidfd)
    return bytes(result), status


def _read_all(fd):
    chunks = []
    while True:
        data = os.read(fd, 65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


_WARM = (b'{"name": "__warm__", "params": [], "body": "return None"}', b"{}")


def _warm():
    """Runs a trivial call's path in the spare (the worker's own code, no tool's), so the pages
    a call touches are copied from the worker before the call comes, not while it runs."""
    try:
        _DUMPS({"ok": True, "value": _jsonable(_main(*_WARM))}, ensure_ascii=False)
        os.fdopen(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    except Exception:  # noqa: BLE001
        pass


def _fork_spare(base_tmp):
    """Forks the child that will run the next call, before that call is asked for: it sets
    itself up (its descriptors, its TMPDIR) and waits for its request on a pipe of its own, so
    a call pays no fork. No tool code runs while a spare waits (it is forked once the previous
    call and everything it left are gone), so a spare is as pristine as the worker.
    Returns (pid, tmp, request pipe, output pipe, result pipe)."""
    tmp = tempfile.mkdtemp(prefix="call-", dir=base_tmp)
    req_r, req_w = os.pipe()
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()
    gc.freeze()  # the worker's objects: a collection in the call need not touch (and copy) them
    worker = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != worker:
                os._exit(0)  # the worker died before the parent-death signal was armed
            os.dup2(req_r, 0)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.dup2(res_w, 3, inheritable=False)
            # Every other descriptor is the worker's: its frames to ais, the other pipe ends.
            os.closerange(4, _MAX_FD)
            os.environ["TMPDIR"] = tmp
            tempfile.tempdir = tmp
            _warm()
            request = _read_all(0)
            spec_line, _, args_line = request.partition(b"\n")
            if not args_line:
                os._exit(0)  # the worker went away
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.write(3, _TAKEN)
            _call(spec_line, args_line, 3)
        finally:
            os._exit(70)
    for fd in (req_r, out_w, res_w):
        os.close(fd)
    return pid, tmp, req_w, out_r, res_r


def _take(frames, spare, request):
    """Runs `request` in `spare`: (result, wait status); the result is None when the spare died
    before it took the request (killed from outside: no tool code ran)."""
    pid, _, req_w, out_r, res_r = spare
    try:
        _write_all(req_w, request)
    except OSError:
        pass
    os.close(req_w)
    result, status = _relay(frames, pid, out_r, res_r)
    os.close(out_r)
    os.close(res_r)
    return (result[1:] if result[:1] == _TAKEN else None), status


def _serve():
    frames = os.dup(1)
    os.dup2(2, 1)
    _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    base_tmp = os.environ.get("TMPDIR") or tempfile.gettempdir()
    requests = sys.stdin.buffer
    _precompile(_WARM[0])
    spare = _fork_spare(base_tmp)
    while True:
        spec_line = requests.readline()
        args_line = requests.readline()
        if not args_line.endswith(b"\n"):
            os._exit(0)
        result, status = _take(frames, spare, spec_line + args_line)
        if result is None:
            shutil.rmtree(spare[1], ignore_errors=True)
            spare = _fork_spare(base_tmp)
            result, status = _take(frames, spare, spec_line + args_line)
        del args_line
        dirty = _reap_leftovers()
        _frame(frames, b"R", result or b"")
        _frame(frames, b"E", _DUMPS({"status": status, "dirty": dirty}).encode())
        del result
        _precompile(spec_line[:-1])
        # The next call's spare first (it warms itself up meanwhile), then the last call's
        # TMPDIR goes, before the next request is read.
        tmp = spare[1]
        spare = _fork_spare(base_tmp)
        shutil.rmtree(tmp, ignore_errors=True)


_serve()
