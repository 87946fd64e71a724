"""Write the schema-4 archive beside this file with the code of commit c2648ab, the last
before schema 5 (issue 45): an archive holding the redacted copy of two-claims@1.0.0 (the
source of ``tests/run/test_withheld.py``), which refused its full bundle.

    mkdir /tmp/old && git archive c2648ab | tar -x -C /tmp/old
    python tests/data/archive-schema4/make.py /tmp/old /tmp/out
    cp -r /tmp/out/archive /tmp/out/*.bundle.tar.zst tests/data/archive-schema4/

Run with the old tree first on ``sys.path`` (the script puts it there) and any Python
that has reprobundle's dependencies installed.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def main(old: Path, out: Path) -> None:
    sys.path.insert(0, str(old))
    import bundler
    from bundler.authoring.build import build
    from bundler.authoring.redact import redact
    from bundler.store import index
    from bundler.store.archive import Archive

    assert str(bundler.__file__).startswith(str(old)), bundler.__file__
    assert index.SCHEMA_VERSION == 4, index.SCHEMA_VERSION
    work = out.parent / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    text = (old / "tests/run/test_withheld.py").read_text()
    source = text.split('SOURCE = """\\\n')[1].split('"""')[0]
    folder = work / "src"
    folder.mkdir()
    (folder / "bundle.yaml").write_text(source)
    for part in ("public", "secret"):  # as test_withheld.write_source writes them
        inputs = folder / "inputs" / part
        inputs.mkdir(parents=True)
        (inputs / "expected.yaml").write_text(f"rules:\n  - {part}-a\n  - {part}-b\n")
        (inputs / "candidate.json").write_text(f'{{"rules": ["{part}-a", "{part}-b"]}}')
        (inputs / "dropped.yaml").write_text(f"rules:\n  - {part}-a\n")
    full = build(folder, out / "two-claims-1.0.0.bundle.tar.zst", 1700000000).path
    redacted = redact(
        full, ["inputs/secret/**"], out / "two-claims-1.0.0.redacted.bundle.tar.zst", "held-out set"
    ).path
    archive = Archive.init(out / "archive")
    try:
        added = archive.add([redacted])
        assert not added.refused, added.refused
        refused = archive.add([full])
        assert [p.code for p in refused.refused] == ["add.version_reused"], refused.refused
    finally:
        archive.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]).absolute(), Path(sys.argv[2]).absolute())
