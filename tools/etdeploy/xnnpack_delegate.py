"""XnnpackBackend at bake: read the delegate payload (XNNHeader + XNNGraph flatbuffer, schema from the
installed executorch wheel), refuse what firmware/backends/xnnpack cannot build with Debian's 2022
XNNPACK, and add the backend's C, its schema slot header and the board's link libraries.

Payload layout (executorch's xnnpack_graph_serialize): bytes 4..8 magic "XH00", 8..10 header length,
10..14 flatbuffer offset, 14..18 flatbuffer size, 18..22 constant data offset, 22..30 constant size.
Constants are either in that trailing block (offset) or in the program's named data (named_key)."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import fbs
from .delegates import BackendPart, DelegateBackend
from .errors import BakeError

BACKEND_DIR = Path(__file__).resolve().parents[2] / "firmware" / "backends" / "xnnpack"
MAGIC = b"XH00"
# Node types firmware/backends/xnnpack/et_backend_xnnpack.c defines (the 2022 library's subgraph calls).
# XNNStaticTranspose is taken only where it is a layout change at the delegate's edge (done in C), moves
# size-1 dimensions only (a reshape), or repeats an earlier transpose of the same value (the same value).
NODES = {
    "XNNAdd", "XNNSubtract", "XNNMultiply", "XNNDiv", "XNNMinimum", "XNNMaximum",
    "XNNConv2d", "XNNDepthwiseConv2d", "XNNFullyConnected",
    "XNNAvgPooling2d", "XNNMaxPooling2d", "XNNGlobalAvgPooling2d",
    "XNNStaticConstantPad", "XNNClamp", "XNNHardswish", "XNNSigmoid", "XNNSoftmax", "XNNLeakyReLU",
    "XNNPReLU", "XNNAbs", "XNNNegate", "XNNFloor", "XNNCeiling", "XNNSquareRoot", "XNNSquare",
    "XNNStaticReshape", "XNNStaticResizeBilinear2D", "XNNConvert", "XNNStaticTranspose",
}
FLOW_HINT = "export with `etdeploy export --flow xnnpack` (its partitioner keeps only nodes the library runs)"


@lru_cache(maxsize=1)
def schema() -> fbs.Schema:
    s = fbs.parse([fbs.wheel_dir() / "backends" / "xnnpack" / "serialization" / "runtime_schema.fbs"])
    # union members written `XNNConv2d: _XNNNodeConv` name a shared table: alias it under the member name
    for u, members in s.unions.items():
        for i, m in enumerate(members):
            if ":" in m:
                alias, table = (x.strip() for x in m.split(":", 1))
                s.tables[alias] = s.tables[table]
                members[i] = alias
    return s


@dataclass
class Payload:
    graph: dict
    constant_offset: int
    constant_size: int


def read_payload(data: bytes) -> Payload:
    if len(data) < 30 or data[4:8] != MAGIC:
        raise BakeError(f"XnnpackBackend payload: no XNNHeader (magic {data[4:8]!r}, want {MAGIC!r}); this "
                        f"backend reads executorch 1.x payloads")
    hlen, fb_off, fb_size, c_off = struct.unpack_from("<HIII", data, 8)
    c_size = struct.unpack_from("<Q", data, 22)[0]
    if fb_off + fb_size > len(data) or c_off + c_size > len(data):
        raise BakeError("XnnpackBackend payload: flatbuffer or constant block outside the payload")
    ident = data[fb_off + 4:fb_off + 8]
    if ident not in (b"XN00", b"XN01"):
        raise BakeError(f"XnnpackBackend payload: graph version {ident!r} unknown (XN00/XN01 known)")
    graph = fbs.Reader(schema(), data[fb_off:fb_off + fb_size]).root()
    return Payload(graph, c_off, c_size)


def node_types(graph: dict) -> list[str]:
    return [n["xnode_union_type"] or "?" for n in graph.get("xnodes") or []]


def _tensor(v: dict) -> dict:
    u = v["xvalue_union"] or {}
    return u.get("tensor_value") or u


def twin_transposes(nodes: list[dict]) -> set[int]:
    """Indices of transposes equal to an earlier one (same input, same perm): the backend makes each that
    one's value. The int8 layout pass gives each consumer its own copy (shufflenet_v2's two-branch unit)."""
    seen, twins = set(), set()
    for i, n in enumerate(nodes):
        if n["xnode_union_type"] == "XNNStaticTranspose":
            key = (n["xnode_union"]["input_id"], tuple(n["xnode_union"]["perm"] or []))
            if key in seen:
                twins.add(i)
            seen.add(key)
    return twins


def _consumers(nodes: list[dict]) -> dict[int, int]:
    """How many node inputs read each value id (equal transposes read it once)."""
    use: dict[int, int] = {}
    twins = twin_transposes(nodes)
    for i, n in enumerate(nodes):
        if i in twins:
            continue
        for k, v in (n["xnode_union"] or {}).items():
            if k.endswith("_id") and not k.startswith("output") and isinstance(v, int):
                use[v] = use.get(v, 0) + 1
    return use


def _transpose_ok(node: dict, values: list[dict], nodes: list[dict]) -> bool:
    """At the delegate's edge (maybe behind a Convert), or moving size-1 dimensions only."""
    a, b, perm = node["input_id"], node["output_id"], list(node["perm"] or [])
    if max(a, b) >= len(values):
        return False
    flags = [_tensor(v).get("flags", 0) for v in values]
    conv = [n["xnode_union"] for n in nodes if n["xnode_union_type"] == "XNNConvert"]
    src = {c["output_id"]: c["input_id"] for c in conv}
    dst = {c["input_id"]: c["output_id"] for c in conv}
    ext_in = flags[a] & 1 or (a in src and src[a] < len(flags) and flags[src[a]] & 1)
    ext_out = flags[b] & 2 or (b in dst and dst[b] < len(flags) and flags[dst[b]] & 2)
    if bool(ext_in) != bool(ext_out):
        # done in C at the edge: the values it re-lays out must feed nothing else
        use = _consumers(nodes)
        if ext_in:
            chain = [a] if flags[a] & 1 else [src[a], a]
            return all(use.get(v, 0) == 1 for v in chain)
        return use.get(b, 0) == (0 if flags[b] & 2 else 1)
    dims = list(_tensor(values[a]).get("dims") or [])
    moved = [p for p in perm if p < len(dims) and dims[p] != 1]
    return moved == sorted(moved)


def _internal(b: int, values: list[dict], nodes: list[dict]) -> bool:
    """Value b is not a delegate output, directly or through a Convert."""
    conv = {n["xnode_union"]["input_id"]: n["xnode_union"]["output_id"] for n in nodes
            if n["xnode_union_type"] == "XNNConvert"}
    flags = [_tensor(v).get("flags", 0) for v in values]
    return b < len(flags) and not flags[b] & 3 and not (b in conv and conv[b] < len(flags) and flags[conv[b]] & 3)


def check_graph(graph: dict, where: str) -> None:
    nodes, values = graph.get("xnodes") or [], graph.get("xvalues") or []
    bad = sorted({t for t in node_types(graph) if t not in NODES})
    twins = twin_transposes(nodes)
    if bad:
        raise BakeError(f"{where}: XNNPACK node(s) {', '.join(bad)} not available in the installed XNNPACK "
                        f"(Debian's 2022 library); {FLOW_HINT}, which leaves them on the portable kernels")
    for i, n in enumerate(nodes):
        t, body = n["xnode_union_type"], n["xnode_union"] or {}
        if t == "XNNStaticTranspose" and not (i in twins and _internal(body["output_id"], values, nodes)) \
                and not _transpose_ok(body, values, nodes):
            raise BakeError(f"{where}: XNNPACK node {i} (XNNStaticTranspose, perm {list(body['perm'] or [])}) is a "
                            f"real transpose inside the delegate, which the installed XNNPACK cannot run; export with "
                            f"`etdeploy export --flow xnnpack` (it keeps reshapes that need one on the portable "
                            f"kernels; a program from an older etdeploy: export it again)")
        if t == "XNNFullyConnected" and body.get("filter_id", 0) < len(values) and \
                _tensor(values[body["filter_id"]]).get("datatype") == 6:
            raise BakeError(f"{where}: XNNPACK node {i} (XNNFullyConnected) has per-channel int8 weights, which the "
                            f"installed XNNPACK's fully connected does not take; {FLOW_HINT} --quantize (per-tensor "
                            f"linear weights)")


def summary(pte: Path) -> str:
    """What went to XNNPACK, per method and delegate: `xnnpack   forward[0]: XNNConv2d x2, ...`."""
    from .pte import read_program
    prog = read_program(Path(pte))
    lines = []
    for m in prog.methods:
        for i, d in enumerate(m.delegates):
            if d.backend != XnnpackDelegate.backend:
                continue
            types = node_types(read_payload(prog.data[d.offset:d.offset + d.size]).graph)
            counts = ", ".join(f"{t} x{types.count(t)}" for t in sorted(set(types)))
            lines.append(f"xnnpack   {m.name}[{i}]: {counts}")
    return "\n".join(lines)


def board_libs(board) -> list[str] | None:
    """[xnnpack] libs from the board's data, or None when the board has no XNNPACK."""
    x = getattr(board, "xnnpack", None)
    return list(x.libs) if x is not None else None


def check_installed(board) -> None:
    """The headers and libraries the backend builds with: the host's packages, or a cross board's
    unpacked sysroot (etdeploy.xnnpack_sysroot)."""
    from . import xnnpack_sysroot
    x = board.xnnpack
    if xnnpack_sysroot.is_cross(x):
        xnnpack_sysroot.check(board)
        return
    if board.family == "linux" and not Path("/usr/include/xnnpack.h").is_file():
        raise BakeError(f"board {board.name}: XNNPACK is not installed (/usr/include/xnnpack.h missing); install "
                        f"{' '.join(x.packages) or 'libxnnpack-dev'} (tools/bootstrap.sh does)")


def check_toolchain(board) -> None:
    """A cross board's XNNPACK is glibc shared objects: only its glibc toolchain can link them."""
    x = board.xnnpack
    if x is None or not x.toolchain:
        return
    from . import config
    tc = config.board_toolchain(board, require=False)
    if tc.name != x.toolchain:
        raise BakeError(f"board {board.name}: XNNPACK programs link Debian's glibc shared objects, which the "
                        f"{tc.name} toolchain cannot; build them with {x.toolchain} (unset the toolchain's "
                        f"environment variable, e.g. ANDROID_NDK_HOME), or export with --flow portable")


class XnnpackDelegate(DelegateBackend):
    backend = "XnnpackBackend"
    report_key = "xnnpack"

    def check(self, program, method, delegate, opts: dict) -> None:
        board = opts.get("_board")
        if board is not None and getattr(board, "family", "") == "cortex-m":
            raise BakeError(f"{program.path.name}: XNNPACK programs run on the host and android-arm64 boards; for "
                            f"{board.name} export with --flow cortex_m (int8) or portable")
        if board is not None and board_libs(board) is None:
            raise BakeError(f"{program.path.name}: board {board.name} does not link XNNPACK (no [xnnpack] in its "
                            f"data); export for it with --flow portable or --quantize (pt2e), or run on board=host "
                            f"or android-arm64")
        if board is not None:
            check_toolchain(board)
        p = read_payload(program.data[delegate.offset:delegate.offset + delegate.size])
        check_graph(p.graph, f"{program.path.name}:{method.name}")

    def describe(self, program, delegate) -> dict:
        p = read_payload(program.data[delegate.offset:delegate.offset + delegate.size])
        types = node_types(p.graph)
        return {"xnnpack_nodes": {t: types.count(t) for t in sorted(set(types))},
                "xnnpack_values": len(p.graph.get("xvalues") or [])}

    def contribute(self, progs, board, out_dir: Path, opts: dict, blobs, fit, model_region) -> BackendPart:
        libs = board_libs(board) or []
        check_installed(board)
        from .bake import write_if_changed
        hdr = write_if_changed(Path(out_dir) / "et_xnn_schema.gen.h", fbs.c_header(schema(), "XNFB"))
        threads = int(opts.get("threads", 1) or 1)
        part = BackendPart(generated=[hdr], sources=sorted(BACKEND_DIR.glob("*.c")), include_dirs=[BACKEND_DIR],
                           defines={"ET_XNN_THREADS": str(threads)}, libs=libs,
                           report={"threads": threads, "libs": libs})
        from . import xnnpack_sysroot as xs
        if xs.is_cross(board.xnnpack):   # Debian's shared objects: the image becomes dynamic (glibc)
            part.include_dirs.append(xs.include_dir(board.xnnpack))
            part.linkflags += xs.link_flags(board.xnnpack)
            part.drop_linkflags.append("-static")
            part.report.update(linked="dynamic", lib_dir=str(xs.lib_dir(board.xnnpack)))
        return part
