#!/usr/bin/env python3
"""Validate interprobe reports against report/schema/report.schema.json (exit 1 on error)."""
import json
import sys

import jsonschema


def main() -> int:
    schema_path, *reports = sys.argv[1:]
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failed = False
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
        for e in errors:
            failed = True
            where = "/".join(str(p) for p in e.path) or "(top level)"
            print(f"{path}: {where}: {e.message}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
