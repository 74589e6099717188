"""The board's linker script, rendered (jinja2, firmware/ld/*.ld.j2) from its memory map and
placement: .text/.rodata/.data/.bss/stack go to the placement regions, and the bake step's
sections (.et_model*, .et_arena*, .et_pool*) to the regions bake chose for them (etdeploy.placing); `arena_region`
overrides the region of arenas and pools."""
from __future__ import annotations

from pathlib import Path

import jinja2

from .config import Board
from .errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
LD_DIR = ROOT / "firmware" / "ld"
TEMPLATE = "bare.ld.j2"
ENTRY = "Reset_Handler"   # every bare-metal family names its reset entry so


def render(board: Board, arena_region: str | None = None, entry: str | None = None,
           placement: dict | None = None) -> str:
    """placement: bake's decision {kind: region} for model/arena/pool (etdeploy.placing); without
    one (the minimal image) each kind goes to its first preference, arenas and pools to arena_region."""
    if board.placement is None or not board.regions:
        raise ConfigError(f"board '{board.name}' has no memory map: it links without a linker script")
    p = board.placement
    where = {k: p.first(k) for k in ("model", "arena", "pool")}
    if arena_region:
        board.region(arena_region)   # raises ConfigError listing the regions
        where["arena"] = where["pool"] = arena_region
    for k, r in (placement or {}).items():
        board.region(r)
        where[k] = r
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(LD_DIR)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    return env.get_template(TEMPLATE).render(
        board=board, p=p, model=where["model"], arena=where["arena"], pool=where["pool"],
        data_load=p.data_load or p.text, entry=entry or ENTRY)


def write(board: Board, path: Path, arena_region: str | None = None) -> Path:
    text = render(board, arena_region)
    path = Path(path)
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path
