#!/usr/bin/env python3
"""Reads a Prometheus text exposition file (what node_exporter's textfile collector reads) with
prometheus_client's parser, after checking each line against the format's grammar, which that
parser does not enforce (it is laxer than the Go parser node_exporter uses): names and label names
valid, label values with only the escapes \\\\ \\" \\n, one HELP and one TYPE per family before its
samples, the samples of a family together, no series twice, no timestamps (node_exporter refuses
them in textfiles). Prints the families as JSON ({name: {help, type, samples: [{labels, value}]}})
and exits 0; exits 1 with the reason on stderr otherwise; 77 when prometheus_client is missing."""
import json
import math
import re
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("python3-prometheus-client is not installed", file=sys.stderr)
    sys.exit(77)

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
LABEL_VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
LABEL = rf"{LABEL_NAME}={LABEL_VALUE}"
SAMPLE = re.compile(rf"^({NAME})(?:\{{((?:{LABEL})(?:,{LABEL})*,?)?\}})? (\S+)$")
HELP = re.compile(rf"^# HELP ({NAME}) ((?:[^\\\n]|\\[\\n])*)$")
TYPE = re.compile(rf"^# TYPE ({NAME}) (counter|gauge|histogram|summary|untyped)$")
VALUE = re.compile(r"^(?:[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN|Nan)$")


def fail(line_no, why):
    where = f"line {line_no}: " if line_no else ""
    print(f"invalid Prometheus text: {where}{why}", file=sys.stderr)
    sys.exit(1)


def check_grammar(text):
    """Returns the number of sample lines; exits on the first line that breaks the format."""
    if text and not text.endswith("\n"):
        fail(0, "the last line has no newline")
    seen = {}  # family name -> the kinds of lines it had: HELP, TYPE, sample
    series, current, samples = set(), None, 0

    def enter(n, name, kind):
        nonlocal current
        if name != current:
            if name in seen:
                fail(n, f"{kind} of {name} apart from the rest of its family")
            current = name
            seen[name] = set()
        if kind in ("HELP", "TYPE"):
            if kind in seen[name]:
                fail(n, f"second {kind} for {name}")
            if "sample" in seen[name]:
                fail(n, f"{kind} for {name} after its samples")
        seen[name].add(kind)

    for n, line in enumerate(text.split("\n")[:-1], start=1):
        if line.startswith("#"):
            m = HELP.match(line) or TYPE.match(line)
            if m:
                enter(n, m.group(1), line[2:6])
            elif line.startswith("# HELP") or line.startswith("# TYPE"):
                fail(n, f"malformed {line[2:6]} line: {line!r}")
            continue  # else a plain comment
        if not line.strip():
            continue
        m = SAMPLE.match(line)
        if not m:
            fail(n, f"not a sample line (name, labels, one value, no timestamp): {line!r}")
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        if not VALUE.match(value):
            fail(n, f"value {value!r} is not a number")
        enter(n, name, "sample")
        names = re.findall(rf"({LABEL_NAME})={LABEL_VALUE}", labels)
        if len(names) != len(set(names)):
            fail(n, f"a label twice: {line!r}")
        if any(l.startswith("__") for l in names):
            fail(n, f"a reserved label name (__): {line!r}")
        if (name, labels) in series:
            fail(n, f"the series {name}{{{labels}}} twice")
        series.add((name, labels))
        samples += 1
    return samples


def main(path):
    with open(path, encoding="utf-8") as f:  # the format is UTF-8: a bad byte raises here
        text = f.read()
    sample_lines = check_grammar(text)
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser's own complaint
        fail(0, f"prometheus_client: {e}")
    out, parsed = {}, 0
    for fam in families:
        if fam.name in out:
            fail(0, f"family {fam.name} comes twice (its samples are not together)")
        if not fam.documentation:
            fail(0, f"family {fam.name} has no HELP")
        samples = []
        for s in fam.samples:
            if s.timestamp is not None:
                fail(0, f"{s.name} has a timestamp")
            if math.isnan(s.value) or math.isinf(s.value):
                fail(0, f"{s.name} is not a finite number")
            samples.append({"labels": s.labels, "value": s.value})
        parsed += len(samples)
        out[fam.name] = {"help": fam.documentation, "type": fam.type, "samples": samples}
    if parsed != sample_lines:
        fail(0, f"{sample_lines} sample lines but the parser read {parsed} samples")
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
