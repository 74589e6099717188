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
    pass


class ToolchainMissing(EtdeployError):
    exit_code = 3


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
