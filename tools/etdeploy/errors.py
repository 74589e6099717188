"""Typed errors of the etdeploy library. Only the CLI (and the SCons tools) turn them into exit
codes and messages; every message says what went wrong and what to do."""
from __future__ import annotations


class EtdeployError(Exception):
    """Base of every error etdeploy raises on purpose."""
    exit_code = 1


class ConfigError(EtdeployError):
    """A board or toolchain file is invalid."""
    exit_code = 2


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
    exit_code = 3

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
    exit_code = 5


class ImageError(BuildError):
    """An image (.bin/.hex/.uf2) cannot be written from the ELF."""


class ProcError(EtdeployError):
    """A subprocess failed (proc.run with check=True)."""
    exit_code = 6

    def __init__(self, argv: list[str], returncode: int | None, output: str = "", timeout: float | None = None):
        self.argv, self.returncode, self.output, self.timeout = list(argv), returncode, output, timeout
        what = f"timed out after {timeout:g} s" if timeout is not None else f"exited with status {returncode}"
        tail = output.strip()[-2000:]
        super().__init__(f"{argv[0]} {what}" + (f":\n{tail}" if tail else ""))


class ProcTimeout(ProcError):
    exit_code = 7


class BakeError(EtdeployError):
    """A program cannot be built for the board."""
    exit_code = 4


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
    def __init__(self, region: str, need: int, room: int, detail: str = ""):
        self.region, self.need, self.room = region, need, room
        super().__init__(f"the plan does not fit region '{region}': needs {need} bytes, room {room} bytes"
                         + (f" ({detail})" if detail else "") +
                         ". Choose a larger region with arena_region=<name>, or a smaller model.")


class RunError(EtdeployError):
    """A run did not end with a positive result record."""
    exit_code = 10


class RunTimeout(RunError):
    exit_code = 11


class RunFault(RunError):
    exit_code = 12


class RunOutOfMemory(RunError):
    exit_code = 13


class RunMissingOperator(RunError):
    exit_code = 14


class RunBadProgram(RunError):
    exit_code = 15


class LinkError(RunError):
    """Frames were lost or corrupted on the wire."""
    exit_code = 16


class RunMismatch(RunError):
    """The run finished but outputs differ from the expected ones."""
    exit_code = 17


class EmulatorMissing(RunError):
    exit_code = 18


class BadInputs(RunError):
    """Inputs given for a run do not fit the program's planned input tensors."""
    exit_code = 19
