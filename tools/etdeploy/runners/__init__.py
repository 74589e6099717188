"""Runners: one module per way of starting (or flashing) a target, in this package.

Each runner class registers itself with @register under the key a board names: `[emulator] kind`
for the ones that run an image, `[flash] method` for the ones that put it on a device (a class can
do both: its Capabilities say). Every module here is imported when a runner is first asked for, so
adding a runner is one file plus its board key (runners/wrapper.py is a small complete example).
Running an image and judging the result is etdeploy.session; this package only starts targets."""
from __future__ import annotations

import importlib
import pkgutil

from ..errors import EmulatorMissing, FlashError, RunError

REGISTRY: dict[str, type] = {}
RUNNERS = REGISTRY          # the same dict: tools register temporary runners in it (faultproxy, bench)
_loaded = False


def register(cls):
    """Class decorator: the runner answers to cls.name in a board's data."""
    REGISTRY[cls.name] = cls
    return cls


def load_all() -> dict[str, type]:
    """Imports every runner module once (each registers itself); returns the registry."""
    global _loaded
    if not _loaded:
        _loaded = True
        for m in pkgutil.iter_modules(__path__):
            if m.name != "base":
                importlib.import_module(f"{__name__}.{m.name}")
    return REGISTRY


def kinds(capability: str = "run") -> list[str]:
    """Registered runner names with a capability ('run' or 'flash')."""
    return sorted(n for n, c in load_all().items() if getattr(c.caps, capability))


def runner_for(board, log=None, prefer: str | None = None):
    emu = getattr(board, "emulator", None)
    kind = prefer or (getattr(emu, "kind", None) if emu is not None else None)
    if not kind:
        raise EmulatorMissing(f"board '{board.name}' has no way to run here (build only): flash it with "
                              f"`etdeploy flash --board {board.name}`")
    load_all()
    if kind not in REGISTRY or not REGISTRY[kind].caps.run:
        raise RunError(f"board '{board.name}' names runner '{kind}'; known: {', '.join(kinds('run'))}")
    return REGISTRY[kind](board, log=log)


def flasher_for(board, log=None):
    """The runner that flashes the board, from its [flash] method."""
    spec = getattr(board, "flash", None)
    if spec is None:
        raise FlashError(f"board '{board.name}' has nothing to flash: run it with `etdeploy run --board {board.name}`")
    load_all()
    cls = REGISTRY.get(spec.method)
    if cls is None or not cls.caps.flash:
        raise FlashError(f"board '{board.name}' names flash method '{spec.method}', which etdeploy does not know; "
                         f"methods: {', '.join(kinds('flash'))}")
    return cls(board, log=log)


def __getattr__(name):
    # run/symbolizer moved to etdeploy.session; callers written before the move keep working.
    if name in ("run", "symbolizer", "_baked_programs"):
        from .. import session
        return getattr(session, {"_baked_programs": "baked_programs"}.get(name, name))
    raise AttributeError(name)
