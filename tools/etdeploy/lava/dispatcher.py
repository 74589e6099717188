"""The installed LAVA dispatcher (Debian lava-dispatcher): its schema check and `lava-run` on this
machine with a device dictionary for a QEMU device written from the board's data.

lava_common lives in the system Python that lava-run runs under, not in etdeploy's venv, so both
go through that interpreter as subprocesses."""
from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from pathlib import Path

from . import DispatcherMissing, JobRefused, NoFarmMethod, jobs

SCHEMA_CHECK = Path(__file__).with_name("schema_check.py")
_ids = itertools.count(1)

# The constants lava-server's base device-type template gives every device; the qemu boot and the
# monitor test read only these.
CONSTANTS = {
    "shutdown-message": "The system is going down for reboot NOW",
    "kernel-start-message": "Linux version [0-9]",
    "default-shell-prompt": "lava-test: # ",
    "failure_retry": 1,
    "boot_retry": 1,
    "spawn_maxread": "4092",
    "posix": {"lava_test_sh_cmd": "/bin/sh", "lava_test_results_dir": "/lava-%s",
              "lava_test_shell_file": "~/.bashrc"},
}


def lava_run() -> str:
    path = shutil.which("lava-run")
    if path is None:
        raise DispatcherMissing("lava-run not found: apt-get install --no-install-recommends lava-dispatcher")
    return path


def lava_python() -> str:
    """The interpreter lava-run runs under (its #! line): the one that has lava_common."""
    first = Path(lava_run()).read_bytes().split(b"\n", 1)[0].decode()
    interp = first[2:].strip().split()[0] if first.startswith("#!") else "/usr/bin/python3"
    return interp


def validate(paths: list[Path]) -> None:
    """Raises JobRefused (one line per refused job) unless LAVA's schema accepts every job."""
    p = subprocess.run([lava_python(), str(SCHEMA_CHECK), *map(str, paths)], capture_output=True, text=True)
    if p.returncode == 3:
        raise DispatcherMissing(f"LAVA's schema is not importable by {lava_python()}: {p.stdout.strip()}")
    if p.returncode != 0:
        refused = [l.split(" ", 1)[1] for l in p.stdout.splitlines() if l.startswith("refused ")]
        raise JobRefused("LAVA refuses the job definition: " + "; ".join(refused or [p.stdout.strip() or p.stderr.strip()]))


def device_dict(board) -> dict:
    """A LAVA device dictionary for this board's QEMU (what lava-server renders from qemu.jinja2,
    with the board's machine and options instead of the Linux guest's)."""
    if jobs.farm_method(board) != "qemu":
        raise NoFarmMethod(f"board '{board.name}' has no QEMU emulator: a local lava-run needs one "
                           f"(submit its jobs to a farm with `etdeploy lava submit`)")
    emu = board.emulator
    options = [f"-M {emu.machine}"] + ([f"-cpu {emu.cpu}"] if emu.cpu else []) + jobs.qemu_options(board)
    # Pair each option with its value: lava-run joins the command into one shell line.
    joined, i = [], 0
    while i < len(options):
        if options[i].startswith("-") and i + 1 < len(options) and not options[i + 1].startswith("-"):
            joined.append(f"{options[i]} {options[i + 1]}")
            i += 2
        else:
            joined.append(options[i])
            i += 1
    return {
        "constants": CONSTANTS,
        "parameters": {},
        "available_architectures": [jobs.qemu_arch(emu.binary)],
        "actions": {
            "deploy": {"methods": {"image": {}}, "connections": {"serial": {}}},
            "boot": {"connections": {"serial": {}},
                     "methods": {"qemu": {"parameters": {"command": emu.binary,
                                                         "options": joined + ["-serial stdio"]}}}},
        },
        "timeouts": {"actions": {}, "connections": {}},
    }


def run_local(job_path: Path, board, out_dir: Path, wall_timeout: float | None = None) -> dict:
    """Runs the job with lava-run; out_dir gets job.yaml, device.yaml, output.yaml (the log in the
    server's format: one '- {...}' line per entry) and LAVA's result.yaml. Returns LAVA's verdict:
    {'job': pass|fail, 'error': str|None, 'cases': {name: result}}."""
    import yaml
    argv0 = lava_run()
    if os.geteuid() != 0:
        raise DispatcherMissing("lava-run runs only as root (it owns /var/lib/lava/dispatcher)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    job_text = Path(job_path).read_text()
    (out_dir / "job.yaml").write_text(job_text)
    dev = out_dir / "device.yaml"
    dev.write_text(yaml.safe_dump(device_dict(board), sort_keys=False))
    job_id = f"{os.getpid()}{next(_ids):03d}"
    job = yaml.safe_load(job_text)
    limit = wall_timeout or (sum(v for v in job["timeouts"]["job"].values() if isinstance(v, int)) + 60)
    work = out_dir / "lava-run"
    try:
        p = subprocess.run([argv0, "--job-id", job_id, "--output-dir", str(work), "--device", str(dev),
                            str(out_dir / "job.yaml")], capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired as e:
        raise DispatcherMissing(f"lava-run did not finish within {limit:g} s") from e
    lines = [l for l in p.stderr.splitlines() if l.startswith("{")]
    (out_dir / "output.yaml").write_text("".join(f"- {l}\n" for l in lines))
    return verdict(out_dir / "output.yaml")


def verdict(log: Path) -> dict:
    """LAVA's own view of the job from its log: the job result and the test cases it recorded."""
    out = {"job": "fail", "error": None, "cases": {}, "test_seconds": None}
    for entry in read_log(log):
        msg = entry.get("msg")
        if entry.get("lvl") == "results" and isinstance(msg, dict):
            if msg.get("definition") == "lava" and msg.get("case") == "job":
                out["job"] = msg.get("result", "fail")
                out["error"] = msg.get("error_msg")
            elif msg.get("case") == "lava-test-monitor":
                out["test_seconds"] = float(msg.get("duration") or 0)
            elif msg.get("definition") != "lava":
                out["cases"][msg.get("case")] = msg.get("result")
    return out


def read_log(log: Path) -> list[dict]:
    """A LAVA job log (output.yaml from lava-run here or `scheduler.jobs.logs` on a server)."""
    entries = []
    for line in Path(log).read_text(errors="replace").splitlines():
        line = line[2:] if line.startswith("- ") else line
        if not line.startswith("{"):
            continue
        try:
            entries.append(json.loads(line))
        except ValueError:
            import yaml
            try:
                e = yaml.safe_load(line)
            except yaml.YAMLError:
                continue
            if isinstance(e, dict):
                entries.append(e)
    return entries
