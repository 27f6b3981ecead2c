# The warm Python worker that runs tool bodies for ais (ais-rt/src/tools/python.rs).
#
# The worker is started once (per run, per working directory) and serves calls one at a time.
# Requests: one JSON object a line on stdin: {"name", "params" (list or null), "body", "args"}.
# For each, the worker forks a child that runs the call in fresh globals and exits; nothing a
# call changes (globals, imported modules' state, the working directory, the environment,
# files in its TMPDIR) survives it, because the worker itself never runs tool code.
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


def _main(req):
    name, args = req["name"], req.get("args") or {}
    params = [_safe(p) for p in (req.get("params") if req.get("params") is not None else list(args))]
    kwargs = {}
    for k, v in args.items():
        if _safe(k) in params:
            kwargs[_safe(k)] = v
    src = _lower(name, req["body"], params)
    import csv, glob, math, re, shutil, subprocess, tempfile  # noqa: E401 - the body's ambient imports
    g = {"__name__": "__ais_tool__", "__builtins__": __builtins__, "os": os, "sys": sys,
         "json": json, "_json": json, "re": re, "csv": csv, "glob": glob, "_glob": glob,
         "math": math, "shutil": shutil, "subprocess": subprocess, "_subprocess": subprocess,
         "tempfile": tempfile, "__ais_shell": __ais_shell}
    exec(compile(src, "<tool %s>" % name, "exec"), g)
    return g["__ais_impl"](**kwargs)


def _call(req, result_fd):
    """Runs one call in the forked child; never returns."""
    global _RESULT
    _RESULT = os.fdopen(result_fd, "w", encoding="utf-8")
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    try:
        value = _main(req)
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

import ctypes  # noqa: E402
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


def _frame(fd, tag, data):
    view = memoryview(tag + struct.pack(">I", len(data)) + data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


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


def _serve():
    frames = os.dup(1)
    os.dup2(2, 1)
    _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    base_tmp = os.environ.get("TMPDIR") or tempfile.gettempdir()
    requests = sys.stdin.buffer
    while True:
        line = requests.readline()
        if not line:
            os._exit(0)
        req = json.loads(line)
        tmp = tempfile.mkdtemp(prefix="call-", dir=base_tmp)
        out_r, out_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                os.close(out_r)
                os.close(res_r)
                os.close(frames)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.close(null)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                os.close(out_w)
                os.environ["TMPDIR"] = tmp
                tempfile.tempdir = tmp
                _call(req, res_w)
            finally:
                os._exit(70)
        os.close(out_w)
        os.close(res_w)
        result, status = _relay(frames, pid, out_r, res_r)
        os.close(out_r)
        os.close(res_r)
        dirty = _reap_leftovers()
        shutil.rmtree(tmp, ignore_errors=True)
        _frame(frames, b"R", result)
        _frame(frames, b"E", _DUMPS({"status": status, "dirty": dirty}).encode())


_serve()
