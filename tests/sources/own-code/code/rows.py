"""A bundled checker for the tests: counts a table's rows, or misbehaves on request."""

import os
import subprocess
import sys
import time

TOKEN = os.urandom(8).hex()  # tells one worker process from another


def ok(message="", **details):
    return {"status": "pass", "message": message, "details": details}


def check(inputs, params):
    mode = params.get("mode", "count")
    path = inputs["table"]
    if mode == "count":
        with open(path, encoding="utf-8") as table:
            rows = [line for line in table if line.strip()][1:]
        if len(rows) >= params["min"]:
            return ok(f"{len(rows)} rows")
        return {
            "status": "fail",
            "message": f"{len(rows)} rows",
            "reasons": [{"code": "rows.too_few", "message": f"fewer than {params['min']}"}],
        }
    if mode == "grandchild":
        pidfile = params["pidfile"]
        script = (
            "import os, time\n"
            "os.setsid()\n"
            f"open({pidfile!r} + '.tmp', 'w').write(open('/proc/self/stat').read().split()[0])\n"
            f"os.rename({pidfile!r} + '.tmp', {pidfile!r})\n"
            "time.sleep(600)\n"
        )
        subprocess.Popen([sys.executable, "-c", script])
        while not os.path.exists(pidfile):
            time.sleep(0.01)
        time.sleep(600)
    if mode == "memory":
        hog = bytearray(params["bytes"])
        return ok(str(len(hog)))
    if mode == "output":
        sys.stdout.write("x" * params["bytes"])
        return ok("printed")
    if mode == "tamper":
        with open(path, "a", encoding="utf-8") as table:
            table.write("4,d\n")
        return ok("wrote")
    if mode == "environment":
        return ok(environ=sorted(os.environ), cwd=os.getcwd(), path=sys.path, files=os.listdir("."))
    if mode == "token":
        return ok(token=TOKEN)
    if mode == "crash":
        os._exit(3)
    if mode == "sleep":  # inside a case, using no CPU, for as long as it is let
        time.sleep(params["seconds"])
        return ok("slept")
    if mode == "network":
        import socket

        try:
            socket.create_connection(("127.0.0.1", params["port"]), timeout=2).close()
            return ok(connected=True)
        except OSError as exc:
            return ok(connected=False, error=str(exc))
    if mode == "forge":  # write its own result line, as the worker would
        import json

        nonce = sys._getframe(1).f_locals["request"]["nonce"]
        result_fd = json.loads(sys.argv[1])["result_fd"]
        os.write(result_fd, params["line"].replace("NONCE", nonce).encode() + b"\n")
        if params.get("then") == "return":  # stay alive: the worker answers again
            return ok("forged")
        os._exit(0)
    if mode == "write":  # as many bytes as it can, 1 MiB a file
        written = 0
        try:
            for i in range(params["files"]):
                with open(f"junk-{i}", "wb") as junk:
                    junk.write(b"x" * (1 << 20))
                written += 1 << 20
        except OSError as exc:
            return ok(written=written, error=str(exc))
        return ok(written=written)
    if mode == "burst":  # fork sleeping children and return at once, between two polls
        children = 0
        for _ in range(params["count"]):
            try:
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
            except OSError:
                break
            children += 1
        return ok(children=children)
    if mode == "fork":
        children = 0
        for _ in range(params["count"]):
            try:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
            except OSError:
                break
            children += 1
        time.sleep(60)
        return ok(children=children)
    if mode == "reach":  # what of the machine it can reach
        import socket

        seen = {}
        for path in params["paths"]:
            try:
                with open(path, "rb") as target:
                    seen[path] = target.read(100).decode("latin-1")
            except OSError as exc:
                seen[path] = f"refused: {exc.strerror}"
        try:
            client = socket.socket(socket.AF_UNIX)
            client.connect(params["socket"])
            client.close()
            seen["socket"] = "connected"
        except OSError as exc:
            seen["socket"] = f"refused: {exc.strerror}"
        return ok(seen=seen, root=sorted(os.listdir("/")))
    raise ValueError(f"unknown mode {mode}")
