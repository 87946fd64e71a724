"""Build every example bundle in this folder, then verify each built file from a fresh,
empty working directory, printing its claims table; then sign the quickstart bundle
with the committed DEMO key (bundles/demo-key: public on purpose, never trust it for
real) and verify the signed copy with --require-signature against the demo public key.
Exits non-zero if any bundle does not build or any claim is not supported.

    python bundles/run_examples.py [OUT_DIR]      (default OUT_DIR: ./out)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEMO_KEY = HERE / "demo-key" / "DEMO-ONLY-not-secret.key"
DEMO_PUB = HERE / "demo-key" / "DEMO-ONLY-not-secret.pub"


def signed_example(out: Path, env: dict[str, str]) -> str | None:
    """Sign the quickstart bundle with the demo key and verify it requiring a signature."""
    built = out / "quickstart.bundle.tar.zst"
    # in a folder of its own: same name and version, other bytes (archive add out/*.bundle.tar.zst)
    signed = out / "signed" / "quickstart.bundle.tar.zst"
    signed.parent.mkdir(exist_ok=True)
    print(f"=== sign {built.name} with the DEMO key (public; never trust it) -> {signed}")
    sign = [sys.executable, "-m", "bundler", "sign", str(built), "--key", str(DEMO_KEY)]
    if subprocess.run([*sign, "-o", str(signed)], env=env).returncode != 0:
        return "quickstart: signing with the demo key failed"
    with tempfile.TemporaryDirectory(prefix="reprobundle-fresh-") as fresh:
        print(f"=== verify {signed} --require-signature --trust {DEMO_PUB.name}", flush=True)
        verified = subprocess.run(
            [
                sys.executable,
                "-P",
                "-m",
                "bundler",
                "verify",
                str(signed),
                "--require-signature",
                "--trust",
                str(DEMO_PUB),
                "--quiet",
            ],
            cwd=fresh,
            env=env,
        )
    if verified.returncode != 0:
        return f"signed quickstart: verify --require-signature exited {verified.returncode}"
    return None


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out").absolute()
    out.mkdir(parents=True, exist_ok=True)
    sources = sorted(p for p in HERE.iterdir() if (p / "bundle.yaml").is_file())
    env = {**os.environ, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", "1700000000")}
    failed = []
    for source in sources:
        target = out / f"{source.name}.bundle.tar.zst"
        print(f"=== build {source.name} -> {target}", flush=True)
        built = subprocess.run(
            [sys.executable, "-m", "bundler", "build", str(source), "-o", str(target)], env=env
        )
        if built.returncode != 0:
            failed.append(f"{source.name}: build exited {built.returncode}")
            continue
        with tempfile.TemporaryDirectory(prefix="reprobundle-fresh-") as fresh:
            print(f"=== verify {target.name} from a fresh directory {fresh}", flush=True)
            verify = [sys.executable, "-P", "-m", "bundler", "verify", str(target)]
            if "\npreregistration:" in (source / "bundle.yaml").read_text("utf-8"):
                # its pre-registration is signed with the DEMO key: trusted here, for the
                # example only, so that its claims can show "as pre-registered"
                verify += ["--trust", str(DEMO_PUB), "--allow-unsigned"]
            verified = subprocess.run(verify, cwd=fresh, env=env)
        if verified.returncode != 0:
            failed.append(f"{source.name}: verify exited {verified.returncode}")
        print(flush=True)
    if (out / "quickstart.bundle.tar.zst").is_file():
        problem = signed_example(out, env)
        if problem:
            failed.append(problem)
    print(f"{len(sources) - len(failed)} of {len(sources)} example bundles built and verified")
    for line in failed:
        print(f"  FAILED {line}")
    return 1 if failed or not sources else 0


if __name__ == "__main__":
    sys.exit(main())
