# The warm Python interpreter of one code-interpreter session. Cells arrive as JSON lines on fd 3 (a socket
# Switchboard holds); each runs in one namespace kept across cells, the value of a final expression becomes the
# cell's result, and after the cell a token is written to stdout and stderr so Switchboard knows where the cell's
# output ends, then the outcome goes back on fd 3.
import ast
import json
import os
import socket
import sys
import traceback

ctl = socket.socket(fileno=3)
cells = ctl.makefile("rb")
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
del sys.argv[1:]

for line in cells:
    msg = json.loads(line)
    result = None
    error = None
    try:
        tree = ast.parse(msg["code"], "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), namespace)
            if value is not None:
                result = repr(value)
    except SystemExit as e:
        error = "SystemExit: %s" % (e.code,)
    except BaseException as e:  # the cell's failure is its result, never the interpreter's end
        frames = traceback.extract_tb(e.__traceback__)
        # Drop this driver's own frames: the user sees only their cell.
        keep = [f for f in frames if f.filename == "<cell>"]
        text = "Traceback (most recent call last):\n" if keep else ""
        text += "".join(traceback.format_list(keep)) + "".join(traceback.format_exception_only(type(e), e))
        sys.stderr.write(text)
        error = "".join(traceback.format_exception_only(type(e), e)).strip()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    token = msg["token"].encode()
    os.write(1, token)
    os.write(2, token)
    ctl.sendall((json.dumps({"result": result, "error": error}) + "\n").encode())
