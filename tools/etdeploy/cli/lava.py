"""etdeploy lava: device-farm jobs for LAVA (write, check, run here, submit, judge the results)."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HELP = "write LAVA jobs from board data, run them with lava-run or a LAVA server, judge their logs"
EPILOG = """examples:
  etdeploy lava --board corstone300,mps2-an386 --pte a.bpte,b.bpte     one job per board x program
  etdeploy lava run build/mps2-an386/lava/etdeploy-mps2-an386-a.yaml    run it here with lava-run
  etdeploy lava results build/mps2-an386/lava/etdeploy-mps2-an386-a     result.json + exit code
  LAVA_URL=https://lava.example.org LAVA_USER=me LAVA_TOKEN=... etdeploy lava submit JOB.yaml
exit codes: those of `etdeploy run` (0 pass, 11 timeout, 12 fault, 16 link errors, 17 mismatch, ...);
2 unknown board, no farm method, or a job LAVA's schema refuses; 18 lava-dispatcher not installed;
20 LAVA server unreachable."""
ROOT = Path(__file__).resolve().parents[3]


def register(sub):
    p = sub.add_parser("lava", help=HELP, description=HELP, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--board", help="board(s), comma-separated")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--pte", help=".pte/.bpte program(s), comma-separated: built with link=text for each board")
    g.add_argument("--elf", help="an image already built with link=text")
    p.add_argument("-o", "--out", help="where the jobs go (default build/<board>/lava)")
    p.add_argument("--timeout", type=float, default=None, help="run timeout in seconds (default 60)")
    p.add_argument("--method", help="farm method instead of the board's first (qemu, fvp, mps3, uf2, pyocd)")
    p.add_argument("--etdump", choices=("0", "1", "debug"), default="0",
                   help="with --pte: build with etdump= so the job's log carries the profile (-> .etdp)")
    p.add_argument("--fvp-docker", default="fvp", help="the farm's docker image holding the FVP (fvp method)")
    p.add_argument("--image-url", help="base URL the farm fetches images from (default: file:// paths here)")
    p.set_defaults(func=main_jobs)
    acts = p.add_subparsers(dest="action", metavar="[run|results|submit|validate]")
    r = acts.add_parser("run", help="run jobs here with lava-run (QEMU boards) and judge them")
    r.add_argument("jobs", nargs="+")
    r.add_argument("-o", "--out", dest="run_out", help="job output directory (default: next to the job)")
    r.set_defaults(func=main_run)
    s = acts.add_parser("results", help="a finished job's output (directory or log) -> result.json + exit code")
    s.add_argument("output", help="directory with output.yaml (and job.yaml), or a log file")
    s.add_argument("--job", help="the job definition (default: job.yaml next to the log)")
    s.add_argument("--run-dir", help="where result.json goes (default: the output directory)")
    s.add_argument("--elf", help="the image the job ran (default: from the job's metadata)")
    s.set_defaults(func=main_results)
    u = acts.add_parser("submit", help="send jobs to LAVA_URL, wait, fetch their logs and judge them")
    u.add_argument("jobs", nargs="+")
    u.add_argument("--url", default=os.environ.get("LAVA_URL"))
    u.add_argument("--no-wait", action="store_true")
    u.add_argument("--poll", type=float, default=5.0, help="seconds between state queries")
    u.add_argument("-o", "--out", dest="run_out", help="job output directory (default: next to the job)")
    u.set_defaults(func=main_submit)
    v = acts.add_parser("validate", help="check job definitions with LAVA's own schema")
    v.add_argument("jobs", nargs="+")
    v.set_defaults(func=main_validate)
    return p


def _log(msg: str) -> None:
    sys.stderr.write(f"etdeploy: {msg}\n")


def build_text_image(board, pte: Path, out: Path, etdump: str = "0") -> Path:
    from .. import errors
    cmd = [sys.executable, "-m", "SCons", "-Q", f"board={board.name}", f"pte={pte}", "link=text",
           f"etdump={etdump}", f"build_dir={out}"]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode:
        raise errors.BuildError(f"building {pte.name} for {board.name} failed:\n{(p.stdout + p.stderr).strip()[-1500:]}")
    return out / board.name / "firmware.elf"


def main_jobs(args) -> int:
    from .. import config, errors, session
    from ..lava import dispatcher, jobs
    if not args.board:
        raise errors.ConfigError("give --board (and --pte or --elf), or one of: run, results, submit, validate")
    if not (args.pte or args.elf):
        raise errors.ConfigError("give --pte <program> or --elf <image built with link=text>")
    boards = [config.load_board(b.strip()) for b in args.board.split(",") if b.strip()]
    for b in boards:
        jobs.farm_method(b, args.method)       # refuse before building anything
    timeout = float(args.timeout or session.DEFAULT_TIMEOUT)
    plans = []
    for b in boards:
        out = Path(args.out).resolve() if args.out else ROOT / "build" / b.name / "lava"
        if args.elf:
            elf = Path(args.elf).resolve()
            if not elf.exists():
                raise errors.RunError(f"no image at {elf}")
            if not jobs.is_text_image(elf):
                raise errors.ConfigError(f"{elf} was not built with link=text: LAVA's console matcher cannot read "
                                         f"its binary link (scons board={b.name} pte=... link=text)")
            plans.append((b, elf, elf.stem if elf.stem != "firmware" else elf.parent.name, out))
            continue
        for pte in [Path(x.strip()).resolve() for x in args.pte.split(",") if x.strip()]:
            elf = build_text_image(b, pte, out / "images" / pte.stem, args.etdump)
            plans.append((b, elf, pte.stem, out))
    with tempfile.TemporaryDirectory(prefix="etdeploy-lava-") as tmp:
        staged = []
        for b, elf, stem, out in plans:
            job, side = jobs.build(b, elf, stem, timeout, out, method=args.method, image_url=args.image_url,
                                   docker_image=args.fvp_docker)
            staged.append((jobs.write(job, side, Path(tmp) / str(len(staged))), side, out))
        try:
            dispatcher.validate([p for p, _, _ in staged])
        except dispatcher.DispatcherMissing as e:
            _log(f"jobs not checked against LAVA's schema: {e}")
        for path, side, out in staged:     # every job valid: only now into place
            out.mkdir(parents=True, exist_ok=True)
            for name in side:
                shutil.copyfile(path.parent / name, out / name)
            shutil.copyfile(path, out / path.name)
            print(out / path.name)
    return 0


def main_validate(args) -> int:
    from ..lava import dispatcher
    dispatcher.validate([Path(j) for j in args.jobs])
    for j in args.jobs:
        print(f"ok {j}")
    return 0


def _job_meta(job_path: Path) -> dict:
    import yaml
    from .. import errors
    try:
        job = yaml.safe_load(Path(job_path).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise errors.ConfigError(f"cannot read job {job_path}: {e}") from None
    meta = (job or {}).get("metadata") or {}
    return {"board": meta.get("etdeploy.board", ""), "image": meta.get("etdeploy.image"),
            "timeout": float(meta.get("etdeploy.timeout", 60)), "name": (job or {}).get("job_name", "")}


def _out_for(job: Path, out: str | None, several: bool) -> Path:
    if out:
        return Path(out) / job.stem if several else Path(out)
    return job.with_suffix("")


def judge(out_dir: Path, job: Path | None = None, elf: str | None = None, run_dir: str | None = None):
    from .. import session
    from ..lava import logs
    out_dir = Path(out_dir)
    log = out_dir / "output.yaml" if out_dir.is_dir() else out_dir
    job = Path(job) if job else log.parent / "job.yaml"
    meta = _job_meta(job) if job.exists() else {"board": "", "image": None, "timeout": 60.0}
    image = Path(elf or meta["image"]) if (elf or meta["image"]) else None
    programs = session.baked_programs(image) if image and image.exists() else []
    rdir = Path(run_dir) if run_dir else log.parent
    try:
        res = logs.judge_log(log, rdir, meta["board"], programs, image, meta["timeout"])
    except Exception as e:
        if getattr(e, "result", None) is not None:
            print(f"{e.result.status.upper()}: {e.result.reason}  ({rdir / 'result.json'})")
        raise
    print(f"PASS: {res.reason}  ({rdir / 'result.json'})")
    return res


def main_results(args) -> int:
    judge(Path(args.output), args.job, args.elf, args.run_dir)
    return 0


def _first_error(items):
    """Runs each job; returns 0, or raises the first job's typed error after all have run."""
    first, several = None, len(items) > 1
    for fn in items:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - re-raised below (typed errors keep their exit code)
            from .. import errors
            if not isinstance(e, errors.EtdeployError):
                raise
            if several:
                _log(f"error: {e}")
            first = first or e
    if first:
        raise first
    return 0


def main_run(args) -> int:
    from .. import config
    from ..lava import FarmJobFailed, dispatcher
    paths = [Path(j) for j in args.jobs]
    dispatcher.validate(paths)

    def one(job: Path):
        meta = _job_meta(job)
        board = config.load_board(meta["board"])
        out = _out_for(job, args.run_out, len(paths) > 1)
        lava = dispatcher.run_local(job, board, out)
        print(f"LAVA: job {lava['job']}, tests {lava['cases'] or 'none recorded'}"
              + (f" ({lava['error']})" if lava["error"] else ""))
        judge(out, out / "job.yaml")
        if lava["job"] != "pass" or lava["cases"].get("et_result") != "pass":
            raise FarmJobFailed(f"etdeploy judged the run a pass but LAVA did not: {lava}")
    return _first_error([lambda j=j: one(j) for j in paths])


def main_submit(args) -> int:
    from ..lava import FarmUnreachable, dispatcher, server
    if not args.url:
        raise FarmUnreachable("set LAVA_URL (and LAVA_USER, LAVA_TOKEN) or give --url")
    paths = [Path(j) for j in args.jobs]
    dispatcher.validate(paths)
    farm = server.Farm(args.url, os.environ.get("LAVA_USER"), os.environ.get("LAVA_TOKEN"))
    ids = []
    for job in paths:
        jid = farm.submit(job.read_text())
        ids.append((job, jid))
        print(f"submitted {job.name}: job {jid} ({args.url.rstrip('/')}/scheduler/job/{jid})")
    if args.no_wait:
        return 0

    def one(job: Path, jid: int):
        meta = _job_meta(job)
        st = farm.wait(jid, timeout=meta["timeout"] + 3600, poll=args.poll)
        out = server.fetch(farm, jid, _out_for(job, args.run_out, len(paths) > 1), job.read_text())
        print(f"LAVA job {jid}: {st.get('health')}")
        judge(out, out / "job.yaml")
    return _first_error([lambda j=j, i=i: one(j, i) for j, i in ids])
