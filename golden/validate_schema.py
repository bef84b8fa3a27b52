#!/usr/bin/python3
"""Validates golden files against golden/schema/ropecheck-golden-1.schema.json with Debian's
python3-jsonschema, independently of the C++ reader (CI runs it on every checked-in suite).

Usage: validate_schema.py SCHEMA FILE_OR_DIR...   Exit 0 when every file conforms, 1 otherwise.
"""
import json
import pathlib
import sys

import jsonschema


def files(arguments):
    for argument in arguments:
        path = pathlib.Path(argument)
        if path.is_dir():
            yield from sorted(path.glob("*.json"))
        else:
            yield path


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    schema = json.loads(pathlib.Path(argv[1]).read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    if validator_class is not jsonschema.Draft202012Validator:
        print(f"{argv[1]}: expected a JSON Schema 2020-12 document", file=sys.stderr)
        return 2
    validator = validator_class(schema)
    failed = 0
    checked = 0
    for path in files(argv[2:]):
        checked += 1
        document = json.loads(path.read_text(encoding="utf-8"))
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        if not errors:
            print(f"{path}: ok")
            continue
        failed += 1
        for error in errors[:10]:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
            print(f"{path}: {where or '(top level)'}: {error.message[:200]}")
    if checked == 0:
        print("no golden files found", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
