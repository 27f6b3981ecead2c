# The driver that runs one Python tool body for ais (ais-rt/src/tools/python.rs).
#
# Input: one JSON object on stdin: {"name", "params" (list or null), "body", "args" (object)}.
# Output: one JSON object on the ORIGINAL stdout (the result channel):
#   {"ok": true, "value": ...} or {"ok": false, "error": "...", "traceback": "..."}.
# Before the body runs, file descriptor 1 is pointed at stderr, so whatever the tool (or a
# process it starts) prints lands in stderr and can never corrupt the result.
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

_RESULT = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = os.fdopen(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)

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
    _RESULT.write(json.dumps(obj, ensure_ascii=False))
    _RESULT.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _main():
    req = json.loads(sys.stdin.read())
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


try:
    _value = _main()
except SystemExit as e:
    _emit({"ok": False, "error": "SystemExit: the tool called exit(%r)" % (e.code,),
           "traceback": ""}, 1)
except BaseException as e:  # noqa: BLE001 - every failure of the tool is reported
    _emit({"ok": False, "error": "%s: %s" % (type(e).__name__, e),
           "traceback": traceback.format_exc()}, 1)
try:
    _emit({"ok": True, "value": _jsonable(_value)}, 0)
except BaseException as e:  # noqa: BLE001
    _emit({"ok": False, "error": "the result could not be sent as JSON: %s: %s" % (type(e).__name__, e),
           "traceback": traceback.format_exc()}, 1)
