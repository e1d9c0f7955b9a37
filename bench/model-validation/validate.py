#!/usr/bin/env python3
"""Runs `interprobe analyze` on every published decode measurement in cases.csv and prints
predicted / published time per output token, the median absolute error and the worst case, with
the held-out cases (every third data line, a rule fixed before any tuning) reported apart.

usage: validate.py [--interprobe PATH] [--cases cases.csv] [--markdown] [--max-median F]
Exit 0 after printing; 1 with --max-median when the median |error| over all cases exceeds F (the
CTest ModelValidationBench guards against a change that makes the model worse); 2 on a bad case or
a failed run."""
import argparse, csv, json, os, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# A report that measured nothing: every price comes from --assume (published, labelled assumed).
EMPTY_REPORT = {"schema_version": "2.1.0",
                "tool": {"name": "interprobe", "version": "0.1.0", "libraries": {},
                         "features": {k: False for k in ("cuda", "hwloc", "libpci", "mpi", "nccl", "nvml")},
                         "libraries_not_probed": "a report that measured nothing (bench/model-validation)"},
                "host": {"hostname": "none", "live": False, "root": "/", "kernel": "",
                         "started_at": "2026-12-07T00:00:00Z", "duration_s": 0},
                "probes": [], "findings": []}
LINKS = {"rtx-pro-6000": "pcie-no-p2p"}  # the seed VM: PCIe without P2P (nvidia-smi topo: NS)


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


REQUIRED = ("id", "source", "hardware", "gpu_key", "gpus", "tp", "ep", "dtype", "engine", "engine_version", "batch",
            "input_tokens", "output_tokens", "spec_decode", "published_ms", "context_tokens", "context_basis", "config", "cuda_graphs")


def read_cases(path):
    with open(path) as f:
        rows = [line for line in f if not line.startswith("#")]
    cases = list(csv.DictReader(rows))
    for n, case in enumerate(cases, start=1):
        for field in REQUIRED:
            if not (case.get(field) or "").strip():
                fail(f"{path}: case {n} ({case.get('id') or '?'}): field '{field}' is empty; every case records "
                         "its source and serving conditions")
        try:
            ok = float(case["published_ms"]) > 0 and int(case["batch"]) > 0 and int(case["tp"]) > 0
        except ValueError:
            ok = False
        if not ok:
            fail(f"{path}: case {n} ({case['id']}): published_ms, batch and tp must be positive numbers")
        if case["cuda_graphs"] not in ("on", "off"):
            fail(f"{path}: case {n} ({case['id']}): cuda_graphs must be on or off, not '{case['cuda_graphs']}'")
    return cases


def assume_arg(case):
    parts = ["gpu=" + case["gpu_key"], "engine=" + engine_key(case["engine"])]
    if case["gpu_key"] in LINKS:
        parts.append("link=" + LINKS[case["gpu_key"]])
    if case["cuda_graphs"] == "off":
        parts.append("graphs=off")
    return ",".join(parts)


def engine_key(engine):
    e = engine.lower()
    return "sglang" if "sglang" in e else "trtllm" if "nim" in e or "tensorrt" in e else "vllm"


def predict(binary, report, case):
    cmd = [binary, "analyze", report, "--model", os.path.join(HERE, "configs", case["config"]), "--tp", case["tp"],
           "--batch", case["batch"], "--context", case["context_tokens"], "--assume", assume_arg(case), "--json", "-q"]
    if int(case["ep"]) > 1:
        cmd.append("--ep")  # whole experts over the TP ranks (every EP case here has EP = TP)
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        fail(f"{case['id']}: {' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()}")
    w = json.loads(out.stdout)["bottlenecks"]["workloads"][0]
    b = w["batches"][0]
    return b["modeled_step_us"] / 1e3, w


def summarize(label, rows):
    if not rows:
        return 0
    errors = [abs(r["ratio"] - 1) for r in rows]
    worst = max(rows, key=lambda r: max(r["ratio"], 1 / r["ratio"]))
    print(f"{label}: {len(rows)} cases, median |error| {100 * statistics.median(errors):.1f}%, "
          f"worst {worst['id']} at {worst['ratio']:.2f}x, within 1.5x: "
          f"{sum(1 for r in rows if 1 / 1.5 <= r['ratio'] <= 1.5)}/{len(rows)}")
    return statistics.median(errors)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interprobe", default=os.path.join(HERE, "..", "..", "build", "cli", "interprobe"))
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.csv"))
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown (for README.md)")
    ap.add_argument("--max-median", type=float, help="exit 1 when the median |error| of all cases exceeds this")
    a = ap.parse_args()
    cases = read_cases(a.cases)
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "empty.json")
        with open(report, "w") as f:
            json.dump(EMPTY_REPORT, f)
        rows = []
        for i, case in enumerate(cases, start=1):
            predicted, _ = predict(a.interprobe, report, case)
            published = float(case["published_ms"])
            rows.append({"id": case["id"], "held_out": i % 3 == 0, "predicted": predicted, "published": published,
                         "ratio": predicted / published, "case": case})
    if a.markdown:
        print("| case | hardware | TP/EP | dtype | engine | batch | published ms | predicted ms | ratio | held out |")
        print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        c = r["case"]
        if a.markdown:
            print(f"| [{r['id']}]({c['source'] if c['source'].startswith('http') else '#'}) | {c['hardware']} | "
                  f"{c['tp']}/{c['ep']} | {c['dtype']} | {c['engine']} {c['engine_version']} | {c['batch']} | "
                  f"{r['published']:.2f} | {r['predicted']:.2f} | {r['ratio']:.2f} | {'yes' if r['held_out'] else ''} |")
        else:
            print(f"{r['id']:34s} published {r['published']:7.2f} ms  predicted {r['predicted']:7.2f} ms  "
                  f"{r['ratio']:5.2f}x{'  (held out)' if r['held_out'] else ''}")
    print()
    summarize("tuning set", [r for r in rows if not r["held_out"]])
    summarize("held out", [r for r in rows if r["held_out"]])
    median = summarize("all", rows)
    if a.max_median is not None and median > a.max_median:
        print(f"median |error| {100 * median:.1f}% exceeds --max-median {100 * a.max_median:.1f}%", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
