#!/usr/bin/env python3
"""Validate interprobe reports against report/schema/report.schema.json (exit 1 on error).

With --nodes-against REPORT_SCHEMA first, the files are fleet reports (report/schema/fleet.schema.json
as the schema) and each node's report is validated against REPORT_SCHEMA too."""
import json
import sys

import jsonschema


def main() -> int:
    args = sys.argv[1:]
    node_schema = None
    if args[:1] == ["--nodes-against"]:
        with open(args[1]) as f:
            node_schema = json.load(f)
        args = args[2:]
    schema_path, *reports = args
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failed = False
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
        if node_schema is not None:
            node_validator = jsonschema.Draft202012Validator(node_schema)
            for i, node in enumerate(report.get("nodes", [])):
                if isinstance(node, dict) and node.get("report") is not None:
                    for e in node_validator.iter_errors(node["report"]):
                        e.path.extendleft(["nodes", i, "report"][::-1])
                        errors.append(e)
        for e in errors:
            failed = True
            where = "/".join(str(p) for p in e.path) or "(top level)"
            print(f"{path}: {where}: {e.message}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
