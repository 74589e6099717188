"""Typed errors of the etdeploy library. Only the CLI (and the SCons tools) turn them into exit
codes and messages; every message says what went wrong and what to do.

EXIT_CODES is the one table of exit codes: each class takes its code from it by name (a class not
in the table inherits its base's), and `etdeploy run --help` and the README list it."""
from __future__ import annotations

EXIT_CODES = {
    "EtdeployError": (1, "any other etdeploy error"),
    "ConfigError": (2, "bad option, board or toolchain file"),
    "ToolchainMissing": (3, "toolchain missing"),
    "BakeError": (4, "program refused at bake (operators, delegates, memory fit)"),
    "BuildError": (5, "build failed"),
    "ProcError": (6, "a tool etdeploy ran failed"),
    "ProcTimeout": (7, "a tool etdeploy ran timed out"),
    "ExportError": (8, "export failed"),
    "OracleError": (9, "the reference runtime could not run a program"),
    "RunError": (10, "run error"),
    "RunTimeout": (11, "timeout"),
    "RunFault": (12, "fault"),
    "RunOutOfMemory": (13, "out of memory"),
    "RunMissingOperator": (14, "missing operator"),
    "RunBadProgram": (15, "bad program"),
    "LinkError": (16, "link errors (frames lost or corrupted)"),
    "RunMismatch": (17, "outputs differ from the expected ones"),
    "EmulatorMissing": (18, "emulator missing or failing to start"),
    "BadInputs": (19, "inputs do not fit the program's planned inputs"),
    "FlashError": (20, "flash failed"),
    "DeviceNotFound": (21, "no device attached"),
    "FarmUnreachable": (22, "device farm (LAVA server) unreachable or refusing the token"),
}


def exit_codes_text() -> str:
    """'0 pass; 1 ...; 2 ...' for help texts."""
    return "; ".join(["0 pass"] + [f"{c} {what}" for c, what in sorted(EXIT_CODES.values())])


class EtdeployError(Exception):
    """Base of every error etdeploy raises on purpose."""
    exit_code = EXIT_CODES["EtdeployError"][0]

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__name__ in EXIT_CODES:
            cls.exit_code = EXIT_CODES[cls.__name__][0]


class ConfigError(EtdeployError):
    """A board or toolchain file is invalid."""


class UnknownBoard(ConfigError):
    """No boards/<name>.toml; the message lists the boards there are."""

    def __init__(self, name: str, known: list[str] | None = None):
        self.name, self.known = name, list(known or [])
        super().__init__(f"unknown board '{name}'" +
                         (f"; boards: {', '.join(self.known)}" if self.known else ""))


class UnknownOption(ConfigError):
    """A build option (scons name=value) that etdeploy does not know."""

    def __init__(self, names: list[str], known: list[str]):
        self.names, self.known = list(names), list(known)
        super().__init__(f"unknown option(s): {', '.join(self.names)}; options: {', '.join(self.known)}")


class ToolchainMissing(EtdeployError):
    """The board's compiler is not installed; says which Debian package or env var provides it."""

    def __init__(self, toolchain: str, compiler: str, package: str | None = None, env: str | None = None,
                 detail: str = ""):
        self.toolchain, self.compiler, self.package, self.env = toolchain, compiler, package, env
        how = []
        if package:
            how.append(f"apt-get install --no-install-recommends {package}")
        if env:
            how.append(f"set {env} to the toolchain's install directory")
        msg = f"toolchain '{toolchain}' not found: no '{compiler}'" + (f" ({detail})" if detail else "")
        if how:
            msg += "; " + " or ".join(how)
        super().__init__(msg)


class BuildError(EtdeployError):
    """Compiling, linking or making an image failed."""


class ImageError(BuildError):
    """An image (.bin/.hex/.uf2) cannot be written from the ELF."""


class ProcError(EtdeployError):
    """A subprocess failed (proc.run with check=True)."""

    def __init__(self, argv: list[str], returncode: int | None, output: str = "", timeout: float | None = None):
        self.argv, self.returncode, self.output, self.timeout = list(argv), returncode, output, timeout
        what = f"timed out after {timeout:g} s" if timeout is not None else f"exited with status {returncode}"
        tail = output.strip()[-2000:]
        super().__init__(f"{argv[0]} {what}" + (f":\n{tail}" if tail else ""))


class ProcTimeout(ProcError):
    """A subprocess did not finish in time."""


class BakeError(EtdeployError):
    """A program cannot be built for the board."""


class BadProgram(BakeError):
    """The .pte/.bpte is malformed or not an executorch 1.5 program."""


class MissingOperators(BakeError):
    def __init__(self, ops: list[str], where: dict | None = None):
        self.ops = list(ops)
        self.where = where or {}
        lines = [f"  {op}" + (f"  (used by {', '.join(sorted(set(self.where[op])))})" if op in self.where else "")
                 for op in self.ops]
        super().__init__(f"{len(self.ops)} operator(s) have no etdeploy kernel:\n" + "\n".join(lines) +
                         "\nExport with operators etdeploy supports (see `etdeploy kernels`), or add kernels in "
                         "firmware/kernels/.")


class PlanDoesNotFit(BakeError):
    """A blob fits no region it may go to. With a fit table (etdeploy.placing): every region's free
    bytes against what was asked, and the option that would place it where it fits."""

    def __init__(self, region: str, need: int, room: int, detail: str = "", kind: str = "", table=None,
                 option: str = "", room_in=()):
        self.region, self.need, self.room = region, need, room
        self.kind, self.table, self.option, self.room_in = kind, list(table or []), option, list(room_in)
        if not self.table:
            super().__init__(f"the plan does not fit region '{region}': needs {need} bytes, room {room} bytes"
                             + (f" ({detail})" if detail else "") +
                             ". Choose a larger region with arena_region=<name>, or a smaller model.")
            return
        allowed = [t["region"] for t in self.table if t["allowed"]]
        lines = [f"the plan does not fit: the {kind} needs {need} bytes and no region it may use has room "
                 f"({', '.join(allowed)}; last tried '{region}', room {room} bytes)" + (f" [{detail}]" if detail else ""),
                 f"  {'region':<10} {'size':>12} {'free':>12} {'asked':>12}  may use  fits"]
        for t in self.table:
            lines.append(f"  {t['region']:<10} {t['size']:>12} {t['free']:>12} {t['asked']:>12}  "
                         f"{'yes' if t['allowed'] else 'no':<7}  {'yes' if t['fits'] else 'no'}")
        if self.room_in:
            lines.append(f"Pass {option}=<region> to place it where it fits ({', '.join(self.room_in)}), "
                         f"or list that region in the board's [placement] {kind} preferences.")
        else:
            lines.append(f"No region of the board has room for it: use a smaller model (or quantize it), "
                         f"or a board with more memory.")
        super().__init__("\n".join(lines))


class RunError(EtdeployError):
    """A run did not end with a positive result record."""


class RunTimeout(RunError):
    pass


class RunFault(RunError):
    pass


class RunOutOfMemory(RunError):
    pass


class RunScratchMismatch(RunOutOfMemory):
    """A kernel's scratch need is not what bake planned (ET_ERR_SCRATCH, found at method load)."""


class RunMissingOperator(RunError):
    pass


class RunBadProgram(RunError):
    pass


class LinkError(RunError):
    """Frames were lost or corrupted on the wire."""


class RunMismatch(RunError):
    """The run finished but outputs differ from the expected ones."""


class EmulatorMissing(RunError):
    pass


class BadInputs(RunError):
    """Inputs given for a run do not fit the program's planned input tensors."""


class FlashError(EtdeployError):
    """Putting an image on a device failed."""


class DeviceNotFound(FlashError):
    """No device (probe, UF2 drive, adb device) is attached."""


class OracleError(EtdeployError):
    """The reference runtime could not run a program."""
