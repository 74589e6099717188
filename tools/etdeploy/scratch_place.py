"""Where each kernel call's planned scratch (etdeploy.kernel_scratch) lives: in a gap of the method's planned
arenas that no tensor live at that instruction occupies (no RAM beyond executorch's own plan), else in the
method's scratch block at the head of the pool (sized by the largest call placed there).

Liveness is worked out from the instructions, conservatively: a planned tensor is live from the instruction
whose last argument (a kernel's `out`, and no input of that call) it is at its first use to its last use; a
tensor that only one instruction uses, without initial data, whose bytes executorch's planner shares with
another tensor (so it keeps nothing between executions: executorch's per-call scratch tensors of the cortex_m
operators) during that instruction only; a tensor first used any other way (a
method input, a mutable buffer that keeps state between executions, a second output, a delegate's output, a
tensor list's item) and every method input is live over the whole method, outputs to its end.
A method with a jump (JumpFalseCall: loops) or a move (MoveCall: one value's tensor then stands for another's)
keeps all its scratch in the pool block."""
from __future__ import annotations

ALIGN = 16   # the arenas are 16-aligned; kernels get 16-aligned scratch


def live_ranges(m) -> dict[int, tuple[int, int]]:
    """{planned tensor value index: (first, last) instruction ordinal during which its bytes are in use}."""
    end = max(m.instructions - 1, 0)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    produced: set[int] = set()
    for k, (kind, used, out, *rest) in enumerate(m.instr_uses):
        args = rest[0] if rest else used
        for v in used:
            if v not in first:
                first[v] = k
                if kind == "KernelCall" and v == out and _only_out(v, args, used):
                    produced.add(v)
            last[v] = k
    ins, outs = (set(x) for x in m.io_values)
    shared = _shared(m.planned)
    rng = {}
    for v, (_, _, _, init) in m.planned.items():
        if v in first and first[v] == last[v] and not init and v in shared and v not in ins and v not in outs:
            rng[v] = (first[v], first[v])
        elif v not in first or v in ins or v not in produced:
            rng[v] = (0, end)
        else:
            rng[v] = (first[v], end if v in outs else last[v])
    return rng


def _shared(planned: dict) -> set[int]:
    """Tensors whose bytes executorch's planner also gave to another tensor: it bounded their lifetime, so they
    carry nothing from one execution to the next (a mutable buffer is planned for the whole program)."""
    out: set[int] = set()
    by_mem: dict = {}
    for v, (mid, off, n, _) in planned.items():
        by_mem.setdefault(mid, []).append((off, off + (n if n is not None else 1 << 62), v))
    for spans in by_mem.values():
        spans.sort()
        reach, who = -1, None
        for lo, hi, v in spans:
            if lo < reach:
                out.update((v, who))
            if hi > reach:
                reach, who = hi, v
    return out


def _only_out(v: int, args: list, used: list) -> bool:
    """v is the call's output and nothing else: it fills the trailing arguments only (an `.out` kernel lists
    the out and its returned alias last), not an input too (an in-place update such as index_put.out(buf, ...,
    out=buf) reads what the last execution left), nor an item of a tensor list argument."""
    pos = [i for i, a in enumerate(args) if a == v]
    return bool(pos) and pos == list(range(len(args) - len(pos), len(args))) and used.count(v) == len(pos)


def _gap(busy: list[tuple[int, int]], size: int, need: int) -> int | None:
    """The lowest ALIGN-aligned offset of `need` bytes inside [0, size) that meets none of `busy`."""
    at = 0
    for lo, hi in sorted(busy):
        if lo - at >= need:
            return at
        at = max(at, (hi + ALIGN - 1) & ~(ALIGN - 1))
    return at if size - at >= need else None


def place(m, plan: list[int], untouched=None) -> tuple[list[int], list[int], int]:
    """(per instruction: arena mem_id holding its scratch, 0 = the pool block; per instruction: its offset in
    that arena; bytes of the pool block, 16-aligned). untouched(k) -> value indices the kernel of instruction
    k never reads or writes (executorch's CMSIS-NN scratch tensor of a cortex_m call, which our kernels do not
    use): where such a tensor serves no other instruction, the call's own scratch may overlap it."""
    n = len(plan)
    mem, off, block = [0] * n, [0] * n, 0
    loops = any(u[0] in ("JumpFalseCall", "MoveCall") for u in m.instr_uses)
    rng = {} if loops else live_ranges(m)
    for k, need in enumerate(plan):
        if not need:
            continue
        spot = None
        free = set(untouched(k)) if untouched else set()
        for mid, size in enumerate(m.arenas):
            if loops or mid == 0 or size < need:
                continue
            busy = []
            for v, (a, b) in rng.items():
                t_mid, t_off, t_bytes, _ = m.planned[v]
                if t_mid == mid and a <= k <= b and not (v in free and a == b == k):
                    # a tensor of unknown size (a dtype we do not know) holds the rest of the arena
                    busy.append((t_off, t_off + t_bytes if t_bytes is not None else size))
            at = _gap(busy, size, need)
            if at is not None:
                spot = (mid, at)
                break
        if spot:
            mem[k], off[k] = spot
        else:
            block = max(block, need)
    return mem, off, (block + ALIGN - 1) & ~(ALIGN - 1)
