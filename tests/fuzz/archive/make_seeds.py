#!/usr/bin/env python3
"""Writes the archive target's seeds (corpus/) and known-bad archives (regressions/) as small plain
tars: uncompressed, so libFuzzer's mutations reach the tar headers (the reader accepts any
compression libarchive knows). Run from anywhere; rewrites the files it names."""
import io
import os
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))


def entry(name, kind=tarfile.REGTYPE, data=b"", link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size, info.mode = kind, link, len(data), 0o644
    return info, io.BytesIO(data) if data else None


def write(folder, name, entries, fmt=tarfile.USTAR_FORMAT):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:
        for info, data in entries:
            tar.addfile(info, data)
    body = raw.getvalue().rstrip(b"\0")  # drop the record padding, keep the end-of-archive blocks
    body += b"\0" * (-len(body) % 512) + b"\0" * 1024
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    with open(os.path.join(HERE, folder, name), "wb") as out:
        out.write(body)


def snapshot():
    return [
        entry("sys", tarfile.DIRTYPE),
        entry("sys/devices/system/cpu/online", data=b"0-3\n"),
        entry("sys/bus/pci/devices/0000:00:01.0", tarfile.SYMTYPE, link="../../../devices/pci0000:00/0000:00:01.0"),
        entry("cpuid.txt", data=b"0x0 0x0 0x10 0x68747541 0x444d4163 0x69746e65\n"),
        entry("manifest.json", data=b'{"format": 1, "unreadable": []}\n'),
    ]


write("corpus", "snapshot-ustar.tar", snapshot())
write("corpus", "snapshot-pax.tar", snapshot(), tarfile.PAX_FORMAT)
write("corpus", "snapshot-gnu.tar", snapshot(), tarfile.GNU_FORMAT)
write("corpus", "links-inside.tar", [
    entry("x", tarfile.SYMTYPE, link="."),
    entry("dir", tarfile.DIRTYPE),
    entry("dir/up", tarfile.SYMTYPE, link=".."),
])
write("corpus", "refused-absolute.tar", [entry("/etc/passwd", data=b"x\n")])
write("corpus", "refused-dotdot.tar", [entry("sys/../../escape", data=b"x\n")])
write("corpus", "refused-hardlink.tar", [entry("a", data=b"x\n"), entry("b", tarfile.LNKTYPE, link="a")])
write("corpus", "refused-link-out.tar", [entry("sys", tarfile.SYMTYPE, link="../../etc")])
write("corpus", "refused-fifo.tar", [entry("fifo", tarfile.FIFOTYPE)])
# Issue 11 item 2: links that stay inside lexically but climb out once the earlier ones exist.
write("regressions", "lexical-links-escape.tar", [
    entry("x", tarfile.SYMTYPE, link="."),
    entry("up", tarfile.SYMTYPE, link="x/.."),
])
# A sparse map that puts one byte 1 TiB past a 100-byte file: reading it back wrote zeros until
# the fuzzer's timeout (CI, 2026-12-04). Sparse entries are refused now.
sparse = tarfile.TarInfo("sys/big")
sparse.size, sparse.mode = 1, 0o644
sparse.pax_headers = {"GNU.sparse.size": "100", "GNU.sparse.numblocks": "1",
                      "GNU.sparse.offset": str(1 << 40), "GNU.sparse.numbytes": "1"}
write("regressions", "sparse-hole-past-size.tar", [(sparse, io.BytesIO(b"x"))], tarfile.PAX_FORMAT)
