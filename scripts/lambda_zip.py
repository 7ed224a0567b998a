#!/usr/bin/env python3
"""Zips every target/lambda/<step>/bootstrap into <out>/<step>/bootstrap.zip.

One archive member, `bootstrap`, mode 0755, deflated: what Lambda's provided.al2023
runtime runs (the same layout `cargo lambda build --output-format zip` writes). Zipping
the bootstraps `make lambdas` just built, instead of running a second cargo build with
`--output-format zip`, keeps the zips identical to the binaries the template deploys even
when sources change in between. Python standard library only.

Usage: lambda_zip.py LAMBDA_DIR OUT_DIR
"""

import sys
import zipfile
from pathlib import Path


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    boots = sorted(p for p in src.glob("*/bootstrap") if p.is_file())
    if not boots:
        sys.exit("no %s/*/bootstrap: build first" % src)
    for boot in boots:
        dest = out / boot.parent.name / "bootstrap.zip"
        dest.parent.mkdir(parents=True, exist_ok=True)
        info = zipfile.ZipInfo("bootstrap", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100755 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        tmp = dest.with_suffix(".zip.tmp")
        with zipfile.ZipFile(tmp, "w") as z, boot.open("rb") as f:
            z.writestr(info, f.read(), compresslevel=9)
        tmp.replace(dest)
        print("%s %d bytes" % (dest, dest.stat().st_size))


if __name__ == "__main__":
    main()
