#!/usr/bin/env python3
"""`--format html` in a real browser (issue 18): every fixture and example report, and a hostile one
built here, is rendered by the binary and loaded in headless Chromium. Checks: the page renders
fast and small, the expected chart titles and axis labels are in the DOM, no console message, the
hostile strings are text (no script or img element, no handler attribute came from them), and a
screenshot of a set size is not blank. Exit 77 (CTest SKIP_RETURN_CODE) when Chromium is absent.

usage: html_in_chromium.py BINARY SOURCE_DIR [SHOTS_DIR]
"""
import glob
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HOSTILE = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>'<svg onload=alert(3)>"
MAX_BYTES = 1_000_000
MAX_RENDER_S = float(os.environ.get("INTERPROBE_HTML_TIME_LIMIT_S", "1"))


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def hostile_report(source, out_path):
    """this-vm-run (every section) with the seed case's 8-GPU topology and hostile machine strings."""
    with open(os.path.join(source, "examples/reports/this-vm-run.json")) as f:
        r = json.load(f)
    with open(os.path.join(source, "tests/fixtures/seed-case/report.json")) as f:
        r["topology"] = json.load(f)["topology"]
    r["host"]["hostname"] = "host" + HOSTILE
    r["virtualization"]["product"] = "Product" + HOSTILE
    for e in r["virtualization"]["evidence"]:
        if e["family"] == "dmi":
            e["value"] = "sys_vendor " + HOSTILE
    r["topology"]["gpus"][0]["name"] = "GPU" + HOSTILE
    r["bandwidth"]["sweeps"][0]["src"] = "node0" + HOSTILE
    r["collective"]["allreduce"][0]["devices"] = ["0: " + HOSTILE]
    r["bottlenecks"]["workloads"][0]["model"] = "model" + HOSTILE
    r["findings"][0]["title"] = "finding " + HOSTILE
    # A measured pair, so the matrix's second line (measured GB/s) is drawn too.
    r["bandwidth"]["p2p_pairs"] = [{"src": "gpu0", "dst": "gpu1", "truth": "claimed_but_staged", "peer_access_claimed": True,
                                    "p2p_gbps": 1.25, "staged_gbps": 1.2, "p2p_latency_us": 20.0, "staged_latency_us": 21.0,
                                    "reason": "peer copies as slow as staged ones " + HOSTILE}]
    with open(out_path, "w") as f:
        json.dump(r, f)


def expected_text(report):
    """Chart titles and axis labels the page must show, from what the report holds."""
    want = []
    bw = report.get("bandwidth")
    if bw and any(s["points"] for s in bw["sweeps"]):
        want += ["Bandwidth vs size", "Time per copy vs size", "size (bytes)", "GB/s"]
    if bw and any(s["points"] and (s["kind"].startswith("p2p") or s["kind"].startswith("staged_")) for s in bw["sweeps"]):
        want += ["Bandwidth vs size, GPU to GPU"]
    col = report.get("collective")
    if col and any(p for s in col["allreduce"] for p in s["points"] if not p["in_place"]):
        want += ["All-reduce time vs size", "All-reduce busbw vs size", "busbw GB/s (nccl-tests)"]
    comp = report.get("compute")
    if comp and any(e["points"] for e in comp["engines"]):
        want += ["GEMM throughput vs M", "GEMM weight bandwidth vs M", "TFLOP/s", "M (rows of X)"]
    topo = report.get("topology")
    if topo and len(topo["gpus"]) >= 2:
        want += ["GPU pairs: path class, NVLinks, P2P", "NVLink"]
        for t in (bw or {}).get("p2p_pairs", []):
            want.append(f"{t['src']}-{t['dst']}: ")  # the pair's tooltip, with what was measured
            want.append(f"measured {t['truth']}")
    bn = report.get("bottlenecks")
    if bn and any(w["batches"] for w in bn["workloads"]):
        want += ["decode step by category", "share of the modeled step"]
    return want


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = {}
        self.handlers = []
        self.text = []
        self.svg_titles = 0
        self._stack = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.handlers += [(tag, k) for k, _ in attrs if k.startswith("on")]
        self._stack.append(tag)

    def handle_endtag(self, tag):
        if self._stack and self._stack[-1] == tag:
            self._stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def png_check(path, width, height):
    """IHDR size, and enough rows whose filtered bytes are not all one value (a blank page's are)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    w, h, depth, colour = ihdr[:4]
    assert (w, h) == (width, height), f"screenshot is {w}x{h}, asked {width}x{height}"
    bpp = {2: 3, 6: 4}.get(colour, 1) * depth // 8
    raw = zlib.decompress(idat)
    stride = 1 + w * bpp
    busy = sum(1 for y in range(h) if len(set(raw[y * stride + 1 + bpp:(y + 1) * stride])) > 1)
    return busy / h


def simulated_report(binary, out_path):
    """GPU sweeps and a P2P verdict from the simulated vendor libraries (tests/sim), 2 GPUs, a few
    seconds; None when the build has no simulator paths to give."""
    cuda, nvml, config = (os.environ.get(k) for k in ("INTERPROBE_SIM_CUDA", "INTERPROBE_SIM_NVML", "INTERPROBE_SIM_CONFIG"))
    if not (cuda and nvml and config):
        return None
    env = dict(os.environ, INTERPROBE_CUDA_LIB=cuda, INTERPROBE_NVML_LIB=nvml, INTERPROBE_SIM_CONFIG=config)
    p = subprocess.run([binary, "bw", "--engine", "cuda", "--sizes", "4K,1M,16M", "--budget", "0.02", "--target-cv", "0.2",
                        "-q", "-o", out_path], env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"simulated bw run failed ({p.returncode}): {p.stderr}")
    return out_path


def main():
    binary, source = sys.argv[1], sys.argv[2]
    shots = sys.argv[3] if len(sys.argv) > 3 else None
    chromium = find_chromium()
    if not chromium:
        print("SKIPPED: no chromium on PATH (Debian: apt-get install chromium; scripts/install-deps --test)")
        return 77
    work = tempfile.mkdtemp(prefix="interprobe-html-")
    failures = []
    try:
        reports = sorted(glob.glob(os.path.join(source, "tests/fixtures/reports/*.json")))
        reports += [os.path.join(source, "tests/fixtures/seed-case/report.json")]
        reports += sorted(glob.glob(os.path.join(source, "examples/reports/*.json")))
        hostile = os.path.join(work, "hostile-dmi.json")
        hostile_report(source, hostile)
        reports.append(hostile)
        simulated = simulated_report(binary, os.path.join(work, "simulated-2gpu-bw.json"))
        if simulated:
            reports.append(simulated)
        largest = max(reports, key=os.path.getsize)
        for i, path in enumerate(reports):
            name = os.path.relpath(path, source) if not path.startswith(work) else os.path.basename(path)
            failures += [f"{name}: {m}" for m in check_one(binary, chromium, path, path == hostile, path == largest, work, i, shots)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    print(f"{len(reports)} reports, {len(failures)} failures")
    return 1 if failures else 0


def check_one(binary, chromium, path, is_hostile, is_largest, work, index, shots):
    errors = []
    page = os.path.join(work, f"r{index}.html")
    started = time.monotonic()
    p = subprocess.run([binary, "report", path, "--format", "json", "--export-html", page], capture_output=True, text=True)
    seconds = time.monotonic() - started
    if p.returncode != 0:
        return [f"render exit {p.returncode}: {p.stderr}"]
    size = os.path.getsize(page)
    print(f"{os.path.basename(path)}: {size} bytes of HTML in {seconds:.3f} s")
    if size >= MAX_BYTES:
        errors.append(f"HTML is {size} bytes, limit {MAX_BYTES}")
    if is_largest and seconds >= MAX_RENDER_S:
        errors.append(f"largest report rendered in {seconds:.2f} s, limit {MAX_RENDER_S}")
    with open(page, encoding="utf-8") as f:
        source_html = f.read()
    if "<script" in source_html.lower() or "http://" in source_html.replace("http://www.w3.org/2000/svg", ""):
        errors.append("the page holds a script tag or a network address")
    shot = os.path.join(work, f"r{index}.png")
    profile = tempfile.mkdtemp(prefix="profile-", dir=work)
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--window-size=1200,2000",
            f"--screenshot={shot}", "--dump-dom", "file://" + page]
    c = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if c.returncode != 0 or not c.stdout.strip():
        return errors + [f"chromium exit {c.returncode}, DOM {len(c.stdout)} bytes: {c.stderr[-2000:]}"]
    console = [line for line in c.stderr.splitlines() if "CONSOLE" in line]
    if console:
        errors.append("console messages: " + " | ".join(line[:240] for line in console[:5]))
    dom = Dom()
    dom.feed(c.stdout)
    text = "".join(dom.text)
    with open(path) as f:
        report = json.load(f)
    for want in expected_text(report):
        if want not in text:
            errors.append(f"'{want}' is not in the DOM")
    if "findings" not in text or "probes" not in text:
        errors.append("the sections findings/probes are missing")
    if dom.tags.get("script") or dom.tags.get("img") or dom.handlers:
        errors.append(f"script {dom.tags.get('script', 0)}, img {dom.tags.get('img', 0)} elements, handlers {dom.handlers[:3]}")
    if is_hostile:
        if dom.tags.get("svg", 0) < 8:
            errors.append(f"hostile report: {dom.tags.get('svg', 0)} charts, expected at least 8")
        for who in ("host", "Product", "sys_vendor ", "GPU", "finding ", "model"):
            if who + HOSTILE not in text:
                errors.append(f"hostile string after '{who}' is not shown as text")
    if not os.path.exists(shot):
        return errors + ["no screenshot written"]
    busy = png_check(shot, 1200, 2000)
    print(f"  screenshot: {busy:.0%} of the rows hold something")
    if busy < 0.2:
        errors.append(f"screenshot nearly blank: {busy:.0%} of the rows hold something")
    if shots:
        os.makedirs(shots, exist_ok=True)
        shutil.copy(shot, os.path.join(shots, os.path.splitext(os.path.basename(path))[0] + ".png"))
    return errors


if __name__ == "__main__":
    sys.exit(main())
