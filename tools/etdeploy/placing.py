"""Where bake puts each kind of blob (model bytes, planned arenas, method pools): the first region of
the board's preference list for that kind (`[placement] model = ["sram", "ddr"]`) with room for it,
unless an option (model_region=, arena_region=, pool_region=) names the region. Kinds are placed in
KINDS order, each taking room from what the ones before it took. Nothing fitting is a
PlanDoesNotFit that shows the fit table and names the option that would help."""
from __future__ import annotations

from dataclasses import dataclass, field

from .errors import BakeError, PlanDoesNotFit

KINDS = ("model", "arena", "pool")
OPTION = {"model": "model_region", "arena": "arena_region", "pool": "pool_region"}


def _kib(n: int) -> str:
    return f"{n / 1024:.1f}K" if n < (1 << 20) else f"{n / (1 << 20):.2f}M"


@dataclass
class Decision:
    kind: str
    region: str
    need: int
    why: str
    tried: list = field(default_factory=list)   # [(region, free bytes)] before the one taken

    def as_dict(self) -> dict:
        return {"region": self.region, "bytes": self.need, "why": self.why,
                "tried": [{"region": r, "free": f} for r, f in self.tried]}


def preferences(board, kind: str, opts: dict) -> tuple[list[str], str | None]:
    """(regions to try in order, the option that chose them or None). arena_region= also places the
    method pools unless pool_region= says otherwise."""
    opt = OPTION[kind]
    by = opt if opts.get(opt) else ("arena_region" if kind == "pool" and opts.get("arena_region") else None)
    if by:
        name = opts[by]
        if name not in {r.name for r in board.regions}:
            raise BakeError(f"{by}={name}: region '{name}' (for {kind}) is not a memory region of board "
                            f"'{board.name}'; regions: {', '.join(r.name for r in board.regions) or '(none)'}")
        r = board.region(name)
        if not _holds(board, r, kind):
            raise BakeError(f"{by}={name}: region '{name}' is not loaded with the image (no load = true), so it "
                            f"cannot hold the model bytes; loaded regions: "
                            f"{', '.join(x.name for x in board.regions if x.load)}")
        return [name], by
    if board.placement is None:
        return [], None
    return list(board.placement.prefs(kind)), None


def fit_table(board, used: dict, kind: str, need: int, allowed: list[str]) -> list[dict]:
    return [{"region": r.name, "size": r.size, "free": r.size - used.get(r.name, 0), "asked": need,
             "allowed": r.name in allowed, "fits": need <= r.size - used.get(r.name, 0) and _holds(board, r, kind)}
            for r in board.regions]


def _holds(board, region, kind: str) -> bool:
    """Model bytes must be in a region the image loads (load = true), when the board marks any."""
    return kind != "model" or region.load or not any(r.load for r in board.regions)


def decide(board, needs: dict, opts: dict, details: dict | None = None) -> dict[str, Decision]:
    """needs: {kind: bytes}; details: {kind: [(what, bytes)]} for the error. Returns {kind: Decision}
    for boards with a memory map (empty for the host, whose blobs are ordinary static arrays)."""
    if not board.regions or board.placement is None:
        for kind in KINDS:       # an option naming a region on a board without a memory map
            if opts.get(OPTION[kind]):
                preferences(board, kind, opts)
        return {}
    sizes = {r.name: r.size for r in board.regions}
    used: dict[str, int] = {}
    out = {}
    for kind in KINDS:
        need = needs.get(kind, 0)
        regions, by_option = preferences(board, kind, opts)
        tried = []
        for i, name in enumerate(regions):
            free = sizes[name] - used.get(name, 0)
            if need <= free and _holds(board, board.region(name), kind):
                if by_option:
                    why = f"{by_option}={name}"
                elif i == 0:
                    why = f"first preference, {_kib(free)} free"
                else:
                    why = "; ".join(f"{r} has {_kib(f)} free" for r, f in tried) + \
                        f", {_kib(need)} needed: next preference {name}"
                out[kind] = Decision(kind, name, need, why, tried)
                used[name] = used.get(name, 0) + need
                break
            tried.append((name, free))
        else:
            table = fit_table(board, used, kind, need, regions)
            room = [t["region"] for t in table if t["fits"]]
            opt = OPTION[kind] if not (kind == "pool" and by_option == "arena_region") else "arena_region"
            last, last_free = tried[-1] if tried else (regions[0] if regions else "?", 0)
            what = ", ".join(f"{w} {n} B" for w, n in sorted((details or {}).get(kind, []), key=lambda x: -x[1])[:4])
            raise PlanDoesNotFit(last, need, last_free, what, kind=kind, table=table, option=opt, room_in=room)
    return out


def fit_summary(decisions: dict[str, Decision], board) -> dict:
    """{region: {size, need}} of what bake placed (the report's "fit"; npu_plan adds its buffers)."""
    sizes = {r.name: r.size for r in board.regions}
    fit: dict[str, dict] = {}
    for d in decisions.values():
        e = fit.setdefault(d.region, {"size": sizes[d.region], "need": 0})
        e["need"] += d.need
    return fit
