"""Checks LAVA job definitions with LAVA's own schema (lava_common.schemas.validate, strict as the
server's submission check). Runs under the interpreter of the installed lava-dispatcher, not
etdeploy's venv, and imports nothing from etdeploy.

usage: python3 schema_check.py JOB.yaml...   prints one line per job: "ok <file>" or "refused <file>: <why>"
exit 0 if every job is valid, 1 otherwise, 3 when lava_common is not importable."""
import sys

try:
    import yaml
    from lava_common.schemas import validate
    from voluptuous import Invalid
except ImportError as e:   # pragma: no cover - reported by the caller
    print(f"missing {e}")
    sys.exit(3)


def check(path: str) -> str | None:
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        return f"not a readable YAML job: {str(e).splitlines()[0]}"
    if not isinstance(data, dict):
        return "not a job definition (top level is not a mapping)"
    try:
        validate(data, strict=True)
    except Invalid as e:
        return str(e)
    except (KeyError, TypeError, AttributeError) as e:
        return f"malformed: {e!r}"
    return None


def main(paths) -> int:
    bad = 0
    for p in paths:
        why = check(p)
        if why:
            bad += 1
            print(f"refused {p}: {' '.join(why.split())}")
        else:
            print(f"ok {p}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
