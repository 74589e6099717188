"""Run a built image wherever it can run and judge it: `run(board, elf, run_dir)`.

A runner starts the target (etdeploy.runners, picked from the board's data, never its name), the
link decodes what it says (link.py), the harness judges (harness.py) and results.py writes
build/<board>/run/."""
from __future__ import annotations

import json
from pathlib import Path

from . import harness, results
from .errors import BadInputs, RunError
from .pte import input_mismatch, read_program
from .runners import runner_for
from .runners.base import Runner

DEFAULT_TIMEOUT = 60.0


def baked_programs(elf: Path):
    """The programs bake put in the image (its bake.json next to the ELF)."""
    elf = Path(elf)
    for cand in [elf.parent / "bake.json", *elf.parent.glob("*/bake.json")]:
        if cand.exists():
            doc = json.loads(cand.read_text())
            return [read_program(Path(p)) for p in doc.get("programs", [])]
    return []


def symbolizer(elf: Path):
    """pc -> 'function+0xoff' from the ELF's symbol table."""
    try:
        from elftools.elf.elffile import ELFFile
        with open(elf, "rb") as f:
            e = ELFFile(f)
            tab = e.get_section_by_name(".symtab")
            funcs = sorted((s["st_value"] & ~1, s["st_size"], s.name) for s in tab.iter_symbols()
                           if s["st_info"]["type"] == "STT_FUNC" and s.name) if tab else []
    except (OSError, Exception):
        funcs = []

    def lookup(pc: int) -> str | None:
        pc &= ~1
        best = None
        for start, size, name in funcs:
            if start <= pc < start + max(size, 1):
                best = f"{name}+0x{pc - start:x}"
        return best
    return lookup


def _check_inputs(programs, inputs) -> None:
    """Before the target starts: the firmware would only answer 'bad input'."""
    if not inputs or not programs:
        return
    for mi, arrays in enumerate(inputs):
        if arrays is None or mi >= len(programs[0].methods):
            continue
        why = input_mismatch(programs[0].methods[mi], list(arrays))
        if why:
            raise BadInputs(f"{programs[0].path.name}: {why}")


def run(board, elf, run_dir, timeout: float | None = None, inputs=None, dry_run: bool = False, log=print,
        programs=None, runner: str | None = None, icount: bool = False):
    elf = Path(elf)
    timeout = float(timeout or DEFAULT_TIMEOUT)
    # runner: a board's runner by name, or a runner object (runners.serialport for a real board)
    r = runner if isinstance(runner, Runner) else runner_for(board, log=log, prefer=runner)
    if dry_run:
        argv = r.command(str(elf), port=0, icount=icount)
        log(r.describe(argv))
        return argv
    if inputs is not None and not r.caps.link_rx:
        raise RunError(f"board '{board.name}' ({r.name}) cannot receive inputs over its link: bake them in a .bpte")
    if not elf.exists():
        raise RunError(f"no image at {elf}: build it first (scons board={board.name} pte=...)")
    programs = programs if programs is not None else baked_programs(elf)
    _check_inputs(programs, inputs)
    sess = r.start(str(elf), icount=icount)
    try:
        def order(mi, i):
            try:
                return programs[0].methods[mi].inputs[i].dim_order
            except (IndexError, AttributeError):
                return None
        res = harness.drive(sess, timeout, inputs=inputs, dim_orders=order, ends_with_record=not r.caps.exit_status)
    finally:
        sess.close()

    def op_name(p, m, op):
        try:
            return programs[p].methods[m].operators[op]
        except (IndexError, TypeError):
            return None
    try:
        told = r.explain(res, sess, timeout) if hasattr(r, "explain") else None
        if told:   # a serial port that said nothing or went away: name the port, not the program
            res.status, res.reason = "error", told[1]
            raise harness._with(told[0](told[1]), res)
        harness.judge(res, timeout, describe_op=op_name, symbolize=symbolizer(elf),
                      expect_runs=sum(1 for a in inputs or [] if a is not None))
    finally:
        doc_extra = {}
        if res.events:
            from . import etdump
            # Frames lost on the link: whatever ETDump comes out is partial and is never named as the run's.
            lost = res.link.bad_frames + res.link.lost_frames
            for old in ("etdump.etdp", "etdump.debug.bin", "etdump.partial.etdp", "etdump.partial.debug.bin"):
                (Path(run_dir) / old).unlink(missing_ok=True)
            try:
                doc_extra["etdump"] = etdump.write(res.events, programs, Path(run_dir),
                                                   stem="etdump.partial" if lost else "etdump")
                if lost:
                    doc_extra["etdump"]["partial"] = f"{lost} frame(s) lost on the link"
            except RunError as e:
                doc_extra["etdump"] = {"error": str(e)}
                if res.status == "pass":
                    res.status, res.reason = "error", str(e)
        results.write(res, Path(run_dir), programs, board=getattr(board, "name", ""), extra=doc_extra)
    return res
