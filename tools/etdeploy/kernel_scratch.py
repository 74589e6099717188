"""Planned kernel scratch: the working memory (im2col chunks, padded images, transposed weights, per-channel
constants) each kernel call needs, worked out at bake from the call's argument shapes and int arguments and
the board's ISA (Helium "mve", the DSP extension "dsp", or "plain" C).

One function per kernel family, each the mirror of a C size function next to the kernel's buffer
(`qconv_mve_scratch`, `qdl_scratch`, `qdw_plane_scratch`, `qdp_scratch`, `qdw_as_conv_scratch`, `cm_dsp_conv_scratch`,
`cm_dsp_dw_scratch` in firmware/kernels/cortex_m/). Calls run one at a time, so a method needs the largest of its calls' figures:
bake puts that block at the base of the method pool. At method load every call of an ET_SCRATCH operator
reports its own figure (ctx->scratch_need) and the load fails (ET_ERR_SCRATCH) where it is not bake's: a
model that builds never runs short of scratch mid-inference. The buffers' bounds are read from the
kernels' own #defines, so a kernel that changes one changes the plan with it."""
from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path

from .errors import BakeError
from .pte import TensorInfo

CM_DIR = Path(__file__).resolve().parents[2] / "firmware" / "kernels" / "cortex_m"
_BOUNDS = (
    "QC_COLS", "QC_CPIX", "QC_MAXO", "QT_PIX", "QT_GPIX", "QT_WPK_K", "QT_WPK_MIN", "QC_RUN",  # M55 GEMM
    "QDW_TW", "QDW_ASC", "QDL_TAPS", "QDL_COLS", "QDL_PAD", "QDW_PLANE", "QDW_IB", "QDW_NCH",  # M55 depthwise
    "QDP_SCRATCH", "QDP_QUADS", "QDP_WPK", "QDP_QMAX",
    "CM_DSP_KMAX", "CM_DSP_KCOL", "CM_DSP_NB", "CM_DSP_KCH",                              # DSP GEMM
    "CM_DSP_DWT", "CM_DSP_TAPS", "CM_DSP_DW_TAPS", "CM_DSP_DW_C",                         # DSP depthwise
    "CM_DSP_DW3_BUF", "CM_DSP_DW3_ACC", "CM_DSP_DWK_KMAX",
)
ISAS = ("mve", "dsp", "plain")


def _stamp() -> tuple:
    return tuple((p.name, p.stat().st_mtime_ns) for p in sorted(CM_DIR.glob("*.[ch]")))


@lru_cache(maxsize=4)
def _read_bounds(stamp: tuple) -> dict[str, int]:
    found: dict[str, int] = {}
    for p in sorted(CM_DIR.glob("*.[ch]")):
        for name, val in re.findall(r"^#define\s+(\w+)\s+(\d+)\b", p.read_text(errors="replace"), re.M):
            if name in _BOUNDS:
                found.setdefault(name, int(val))
    missing = [b for b in _BOUNDS if b not in found]
    if missing:
        raise BakeError(f"kernel scratch bounds not found in {CM_DIR}: {', '.join(missing)} "
                        f"(tools/etdeploy/kernel_scratch.py reads them from the kernels' #defines)")
    return found


def bounds() -> dict[str, int]:
    """The kernels' buffer bounds (QC_COLS, QDL_PAD, ...), read from their #defines."""
    return _read_bounds(_stamp())


@lru_cache(maxsize=16)
def _isa_of(cc: str, flags: tuple) -> str:
    out = subprocess.run([cc, *flags, "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True, text=True,
                         check=True).stdout
    mve = re.search(r"#define __ARM_FEATURE_MVE (\d+)", out)
    if mve and int(mve.group(1)) & 1:
        return "mve"
    return "dsp" if re.search(r"#define __ARM_FEATURE_DSP 1", out) else "plain"


def isa(board) -> str:
    """What the cortex_m kernels compile to on this board (cm_util.h's CM_MVE / CM_DSP): asked of the
    board's compiler itself; "plain" when no toolchain is installed (nothing can be built then)."""
    from . import config
    tc = config.board_toolchain(board, require=False)
    cc = tc.locate()
    if cc is None:
        return "plain"
    return _isa_of(str(cc), tuple(config.arch_flags(board, tc)))


# ------------------------------------------------------------------ geometry (cm_conv.h's qconv_args)

def _strides(t: TensorInfo) -> list[int]:
    st, acc = [0] * len(t.sizes), 1
    order = t.dim_order or tuple(range(len(t.sizes)))
    for d in reversed(order):
        st[d] = acc
        acc *= t.sizes[d]
    return st


def _g4(t: TensorInfo, nhwc: bool) -> dict:
    s, st = t.sizes, _strides(t)
    if nhwc:
        return {"n": s[0], "h": s[1], "w": s[2], "c": s[3], "sn": st[0], "sh": st[1], "sw": st[2], "sc": st[3]}
    return {"n": s[0], "c": s[1], "h": s[2], "w": s[3], "sn": st[0], "sc": st[1], "sh": st[2], "sw": st[3]}


def _pair(a) -> tuple[int, int] | None:
    if not (isinstance(a, tuple) and a[0] == "IntList" and 1 <= len(a[1]) <= 2):
        return None
    return (a[1][0], a[1][-1])


def _int(a) -> int | None:
    return a[1] if isinstance(a, tuple) and a[0] == "Int" and isinstance(a[1], int) else None


def _conv_out(n: int, p: int, d: int, k: int, s: int) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def qconv(args: list, depthwise: bool, nhwc: bool) -> dict | None:
    """A convolution call's geometry as the kernels see it (qconv), or None where the kernel would refuse
    the arguments (it then needs no scratch: its load-time call fails and execution reports it)."""
    o = 1 if depthwise else 0
    if len(args) < 14 + o:
        return None
    x, w, out = args[0], args[1], args[13 + o]
    if not all(isinstance(t, TensorInfo) and len(t.sizes) == 4 for t in (x, w, out)):
        return None
    s, p, d = _pair(args[3]), _pair(args[4]), _pair(args[5])
    ints = [_int(args[i]) for i in (6 + o, 7 + o, 10 + o, 11 + o)]
    if None in (s, p, d) or None in ints:
        return None
    c = {"x": _g4(x, nhwc), "KH": w.sizes[1], "KW": w.sizes[2], "sh": s[0], "sw": s[1], "ph": p[0], "pw": p[1],
         "dh": d[0], "dw": d[1], "in_off": ints[0], "out_off": ints[1], "amin": ints[2], "amax": ints[3],
         "depthwise": depthwise}
    if depthwise:
        O = w.sizes[3]
        if w.sizes[0] != 1 or c["x"]["c"] <= 0 or O % c["x"]["c"]:
            return None
        c["cpg"], c["opg"] = 1, O // c["x"]["c"]
    else:
        O, c["cpg"] = w.sizes[0], w.sizes[3]
        if c["cpg"] <= 0 or c["x"]["c"] % c["cpg"] or O % (c["x"]["c"] // c["cpg"]):
            return None
        c["opg"] = O // (c["x"]["c"] // c["cpg"])
    oh = _conv_out(c["x"]["h"], c["ph"], c["dh"], c["KH"], c["sh"])
    ow = _conv_out(c["x"]["w"], c["pw"], c["dw"], c["KW"], c["sw"])
    if oh <= 0 or ow <= 0:
        return None
    c["y"] = _g4(out, nhwc)
    c["y"].update(c=O, h=oh, w=ow)
    return c


# ------------------------------------------------------------------ the kernels' size functions

def _a16(n: int) -> int:
    return (n + 15) & ~15


def qconv_mve(c: dict) -> int:
    """cm_gemm.h qc_parts_of: the channels' constants; for the two-phase GEMM (int8 clamp range) a tile's sums
    and a partial group's short weight rows; the im2col chunk (+16 slack) where windows are copied (not a
    pointwise, or a pointwise whose pixels are not one run, packed for the two-phase GEMM)."""
    b = bounds()
    O, C, x, y = c["y"]["c"], c["x"]["c"], c["x"], c["y"]
    K, P, OW = c["KH"] * c["KW"] * C, y["h"] * y["w"], y["w"]
    if (c["depthwise"] or c["cpg"] != C or (x["sc"] != 1 and C != 1) or y["sc"] != 1 or K <= 0
            or not -127 <= c["in_off"] <= 128):
        return 0
    direct = c["KH"] == 1 and c["KW"] == 1 and c["ph"] == 0 and c["pw"] == 0
    if not direct and K > b["QC_COLS"]:
        return 0
    tile = -128 <= c["amin"] <= c["amax"] <= 127 and -1024 <= c["out_off"] <= 1024   # gemm_tile_mve.h qt_range_ok
    rows = y["sh"] == OW * y["sw"]
    flat = direct and c["sh"] == 1 and c["sw"] == 1 and x["sh"] == x["w"] * x["sw"] and rows and x["w"] == OW
    chunk = b["QC_COLS"] // K
    if tile:
        chunk = min(chunk, b["QC_CPIX"])   # qc_chunk
    # qc_row_of: a one-row 1xKW conv reads its input, a padded copy of the columns only for the border runs
    seg, run, edge = False, 0, 0
    if not direct and c["KH"] == 1 and c["ph"] == 0 and c["dw"] == 1 and x["sw"] == C and y["h"] == 1:
        sw, t = c["sw"], x["w"] + c["pw"] - c["KW"]
        b0 = min((c["pw"] + sw - 1) // sw, OW)
        b1 = min(max(t // sw + 1 if t >= 0 else 0, b0), OW)
        edge = max(b0, OW - b1)
        run = max(min(b1 - b0, b["QC_RUN"]), edge)
        seg = edge <= b["QC_RUN"]
    cols = not seg and (not direct or (tile and chunk > 0 and rows and not flat))
    ks = _a16(4 * O) if O <= b["QC_MAXO"] else 0
    # the sums' pixels: an im2col chunk's, else qt_cap (several groups a pass where a call's pixels are few)
    spix = (run if seg else max(min(P, chunk), b["QT_GPIX"] // 2) if cols
            else min(max(P, b["QT_GPIX"]), b["QT_PIX"]))
    sums = 16 * (spix + 4) if tile else 0
    wpad = 64 if tile and O % 4 and K <= 16 else 0
    copy = ((edge - 1) * c["sw"] + c["KW"]) * C + 16 if seg and edge > 0 else 0
    total = ks + sums + wpad + (K * min(P, chunk) + 16 if cols else copy)
    if tile and 32 < K <= b["QT_WPK_K"] and (not seg or run >= b["QT_WPK_MIN"]):     # a group's weight rows packed (qt_sums2x4w), 16-aligned
        total = _a16(total) + 64 * ((K + 15) // 16)
    return total


def qdw_as_conv(c: dict) -> int:
    """depthwise.c qdw_as_conv_scratch: one input channel, the weights transposed, then the GEMM's for a band of
    output rows (the most within QDW_ASC; all of them where a band would start in the bottom padding)."""
    T, O, OH = c["KH"] * c["KW"], c["y"]["c"], c["y"]["h"]
    if c["x"]["c"] != 1 or T * O > bounds()["QDW_TW"]:
        return 0
    d = dict(c, depthwise=False, cpg=1, opg=O)
    if (OH - 1) * c["sh"] - c["ph"] < c["x"]["h"]:
        for r in range(OH, 0, -1):
            d = dict(d, y=dict(c["y"], h=r))
            if r == 1 or _a16(T * O) + qconv_mve(d) <= bounds()["QDW_ASC"]:
                break
    return _a16(T * O) + qconv_mve(d)


def qdw_lanes(c: dict) -> int:
    """dw_lanes_mve.h qdl_scratch: the padded block image, else the band of rows (16-aligned); the packed
    weights of a block (16-byte pixels, unit column dilation); the per-column tap masks."""
    img = _qdl_img(c)
    if img is None:
        return 0
    wpk = 16 * c["KH"] * c["KW"] if img and c["x"]["c"] != 1 and c["dw"] == 1 else 0
    return _a16(img) + wpk + 8 * c["y"]["w"]


def _qdl_img(c: dict) -> int | None:
    """qdl_img_bytes, None where the lanes path does not take the shapes."""
    b = bounds()
    KH, KW, C, OH, OW = c["KH"], c["KW"], c["x"]["c"], c["y"]["h"], c["y"]["w"]
    T, bcast = KH * KW, C == 1
    if (not c["depthwise"] or (not bcast and c["opg"] != 1) or not 1 <= T <= b["QDL_TAPS"] or OW > b["QDL_COLS"]
            or (not bcast and c["x"]["sc"] != 1) or c["y"]["sc"] != 1 or not -127 <= c["in_off"] <= 128
            or not -255 <= c["out_off"] <= 255 or c["amin"] < -128 or c["amax"] > 127 or c["amin"] > c["amax"]):
        return None
    es = 1 if bcast else 16
    Wp = (OW - 1) * c["sw"] + (KW - 1) * c["dw"] + 1
    Hp, Hb = (OH - 1) * c["sh"] + (KH - 1) * c["dh"] + 1, (KH - 1) * c["dh"] + 1
    if Hp * Wp * es <= b["QDL_PAD"]:
        return Hp * Wp * es
    return Hb * Wp * 16 if not bcast and c["dw"] == 1 and Hb * Wp * 16 <= b["QDL_PAD"] else 0


def qdw_plane(c: dict) -> int:
    """dw_plane_mve.h qdw_plane_scratch: the padded plane, then the interleaved rows."""
    b = bounds()
    KH, KW, O, OH, OW = c["KH"], c["KW"], c["y"]["c"], c["y"]["h"], c["y"]["w"]
    if (not c["depthwise"] or c["opg"] % 4 or KH > 4 or KW > 4 or c["sw"] != 1 or c["dw"] != 1 or c["y"]["sc"] != 1
            or c["amin"] != -128 or c["amax"] != 127 or not -127 <= c["in_off"] <= 128
            or not -255 <= c["out_off"] <= 255 or OH <= 0 or OW <= 0 or O > 255 // 15):
        return 0
    Hn, Wp = (OH - 1) * c["sh"] + (KH - 1) * c["dh"] + 1, (OW + KW - 1 + 15) & ~15
    if Hn * Wp > b["QDW_PLANE"] or OH * 4 * Wp + 16 > b["QDW_IB"] or Wp > 16 * b["QDW_NCH"]:
        return 0
    return _a16(Hn * Wp) + OH * 4 * Wp + 16


# dw_patch_mve.h qdp_modes: (block rows, block columns, blocks a pass, pointers a block, patch columns, patch rows)
_QDP_MODES = {(3, 1): (2, 2, 2, 1, 4, 4), (3, 2): (1, 2, 4, 1, 5, 3), (5, 1): (2, 1, 4, 2, 5, 3), (5, 2): (1, 1, 8, 2, 5, 3)}


def qdw_patch(c: dict) -> int:
    """dw_patch_mve.h qdp_scratch: channel records, packed taps, the raster table, Q pass tables and quad planes (qdp_geo_of: chunks of columns
    within the gather's 8-bit offsets, the tallest band within QDP_SCRATCH, then bands of equal height)."""
    b = bounds()
    K, s, O, OH, OW = c["KH"], c["sh"], c["y"]["c"], c["y"]["h"], c["y"]["w"]
    if (not c["depthwise"] or c["opg"] != 1 or c["x"]["c"] != O or K not in (3, 5) or c["KW"] != K
            or c["sw"] != s or s not in (1, 2) or c["dh"] != 1 or c["dw"] != 1 or c["ph"] < 0 or c["pw"] < 0
            or c["x"]["sc"] != 1 or c["y"]["sc"] != 1 or not -127 <= c["in_off"] <= 128
            or not -255 <= c["out_off"] <= 255 or c["amin"] < -128 or c["amax"] > 127 or c["amin"] > c["amax"]
            or O < 1 or c["x"]["w"] < 1 or c["x"]["h"] < 1):
        return 0
    bh, bw, bpp, pb, pw, ph = _QDP_MODES[(K, s)]
    if OH < bh or OW < bw:
        return 0
    rec = 4 * pb * bpp + 16
    wmax = (63 - (pw - 1)) // (ph - 1)
    cmax = (wmax - K) // s + 1
    nchunks = (OW + cmax - 1) // cmax
    cow = (OW + nchunks - 1) // nchunks
    Wp = (cow - 1) * s + K

    def tbytes(nb):   # qdp_split: 3x3 stride 1 takes an odd last 2x2 block in a half pass, and on odd columns may take
        # 2x1 blocks down the last one (then a half pass of the last 1 or 2)
        B = ((nb + bh - 1) // bh) * ((cow + bw - 1) // bw)
        m0 = (K, s) == (3, 1)
        p1, mh = (B // 2, B & 1) if m0 else ((B + bpp - 1) // bpp, 0)
        p2 = h = 0
        if m0 and cow & 1:
            nbr = (nb + 1) // 2
            A, r = nbr * ((cow - 1) // 2), nbr & 3
            b2, hh = nbr // 4 + (r == 3), int(r in (1, 2))
            if 30 * (A // 2) + 18 * (A & 1) + 33 * b2 + 19 * hh < 30 * (B // 2) + 18 * (B & 1):
                p1, mh, p2, h = A // 2, A & 1, b2, hh
        return p1 * rec + mh * 20 + p2 * 32 + h * 24

    def rtab(hp):   # one chunk: a plane offset per interior pixel
        return 4 * min(hp, c["x"]["h"]) * c["x"]["w"] + 16 if nchunks == 1 else 0
    nb = OH
    while True:
        if nb < bh:
            return 0
        hp = (nb - 1) * s + K
        if (4 * Wp * (hp + 1) + 16 + tbytes(nb) + rtab(hp) <= b["QDP_SCRATCH"]
                and (nb - 1) * c["y"]["sh"] + (cow - 1) * c["y"]["sw"] <= 65535):
            break
        nb -= 1
    nbands = (OH + nb - 1) // nb
    nb = max((OH + nbands - 1) // nbands, bh)
    Hp = (nb - 1) * s + K
    tab, rt, plane = _a16(tbytes(nb)), _a16(rtab(Hp)), _a16(4 * Wp * (Hp + 1) + 16)
    Q = b["QDP_QMAX"]   # quads a call: each its table and plane
    while Q > 1 and (4 * (Q - 1) >= O or Q * (tab + plane) + rt > b["QDP_QUADS"]):
        Q >>= 1
    nw = 4 if s == 1 else 2
    return 4 * Q * 16 * (nw + 3) + b["QDP_WPK"] + rt + Q * (tab + plane)


def _dsp_mm_ok(K: int, N: int, io: int, out_off: int, amin: int, amax: int, kmax: int) -> bool:
    """dsp_gemm.h cm_dsp_mm_shape_ok"""
    return 0 < K <= kmax and N > 0 and -255 <= io <= 255 and -128 <= amin <= amax <= 127 and -255 <= out_off <= 255


def _dsp_mm_bytes(K: int, N: int, two: bool, col8: bool) -> int:
    """dsp_gemm.h cm_dsp_mm_bytes: widened columns (one column: in chunks of CM_DSP_KCH k where those and the
    N partial sums take fewer bytes, cm_dsp_chunked), a channel block's table, the padded last row, int8
    im2col rows, the partial sums"""
    k4, kch = (K + 3) >> 2, bounds()["CM_DSP_KCH"]
    chunks = not two and K > kch and _a16(2 * kch) + _a16(4 * N) < _a16(2 * K)
    tab = 16 * min(N, bounds()["CM_DSP_NB"]) if two else 0
    return (_a16((16 if two else 8) * (kch // 4 if chunks else k4)) + tab + (_a16(4 * k4) if K & 3 else 0)
            + (2 * _a16(K) if col8 else 0) + (_a16(4 * N) if chunks else 0))


def _dsp_convk(c: dict) -> int:
    """dsp_conv.h cm_dsp_convk_scratch"""
    b, C = bounds(), c["x"]["c"]
    K, aligned = c["KH"] * c["KW"] * C, C % 4 == 0
    if not aligned and (K > b["CM_DSP_KCOL"] or not -127 <= c["in_off"] <= 128):
        return 0
    if not _dsp_mm_ok(K, c["y"]["c"], c["in_off"], c["out_off"], c["amin"], c["amax"], b["CM_DSP_KMAX"]):
        return 0
    return _dsp_mm_bytes(K, c["y"]["c"], True, not aligned)


def dsp_conv(c: dict) -> int:
    """dsp_conv.h cm_dsp_conv_scratch: the pointwise or the KxK widened-column GEMM's (dsp_gemm.h)."""
    b, C = bounds(), c["x"]["c"]
    if c["depthwise"] or c["cpg"] != C or c["x"]["sc"] != 1 or c["x"]["sw"] != C or C <= 0:
        return 0
    if c["KH"] == 1 and c["KW"] == 1 and c["ph"] == 0 and c["pw"] == 0:
        ok = _dsp_mm_ok(C, c["y"]["c"], c["in_off"], c["out_off"], c["amin"], c["amax"], b["CM_DSP_KMAX"])
        return _dsp_mm_bytes(C, c["y"]["c"], True, False) if ok else 0
    return _dsp_convk(c)


def dsp_dw_as_conv(c: dict) -> int:
    """dsp_conv.h cm_dsp_dw_as_conv_scratch: one input channel, the weights transposed, then cm_dsp_convk's."""
    O, T = c["y"]["c"], c["KH"] * c["KW"]
    if not c["depthwise"] or c["x"]["c"] != 1 or c["x"]["sw"] != 1 or O < 1 or T < 1 or O * T > bounds()["CM_DSP_DWT"]:
        return 0
    k = _dsp_convk(dict(c, depthwise=False, cpg=1, opg=O))
    return _a16(O * T) + k if k else 0


def dsp_linear(args: list) -> int:
    """linear.c qlin_scratch on the DSP extension: the one-column GEMM's (a widened row, the padded last row)."""
    if len(args) < 12 or not isinstance(args[1], TensorInfo) or len(args[1].sizes) != 2:
        return 0
    N, K = args[1].sizes
    ints = [_int(args[i]) for i in (4, 5, 6, 9, 10)]
    if None in ints:
        return 0
    in_off, f_off, out_off, amax, amin = ints
    io = 0 if isinstance(args[3], TensorInfo) else in_off
    if f_off != 0 or not _dsp_mm_ok(K, N, io, out_off, amin, amax, 2 * bounds()["CM_DSP_KMAX"]):
        return 0
    return _dsp_mm_bytes(K, N, False, False)


def _dsp_dwk(c: dict) -> int | None:
    """dsp_dwk.h cm_dwk_geometry + cm_dwk_scratch_bytes: 4 channels' int16 planes of one band (the longer
    output side as rows), then the band's sums; None where the KxK plane path does not take the shapes."""
    b, x, y, K = bounds(), c["x"], c["y"], c["KH"]
    if (c["opg"] != 1 or x["sc"] != 1 or K != c["KW"] or not 3 <= K <= b["CM_DSP_DWK_KMAX"] or K % 2 == 0
            or c["dh"] != 1 or c["dw"] != 1 or c["sh"] not in (1, 2) or c["sw"] not in (1, 2) or y["c"] < 1):
        return None
    t = y["h"] > y["w"]
    W, OH, OW = (x["h"], y["w"], y["h"]) if t else (x["w"], y["h"], y["w"])
    sh, sw, pw = (c["sw"], c["sh"], c["ph"]) if t else (c["sh"], c["sw"], c["pw"])
    if x["h"] < K and x["w"] < K:
        return None
    blocks = (OW + 3) // 4
    WP = max(W + 2 * pw, blocks * 4 * sw + K - 1)
    WP += WP & 1
    if WP * 4 * K > b["CM_DSP_DW3_BUF"] or blocks * 4 > b["CM_DSP_DW3_ACC"]:
        return None
    nb = min((b["CM_DSP_DW3_BUF"] // (WP * 4) - K) // sh + 1, b["CM_DSP_DW3_ACC"] // (blocks * 4), OH)
    return 8 * ((nb - 1) * sh + K) * WP + 16 * nb * blocks


def dsp_dw(c: dict) -> int:
    """dsp_dw.h cm_dsp_dw_scratch: the KxK plane path's (dsp_dwk.h), else the 3x3 per-channel path's folded
    biases."""
    b, T, O = bounds(), c["KH"] * c["KW"], c["y"]["c"]
    if not 1 <= T <= b["CM_DSP_DW_TAPS"] or c["opg"] >= 4:
        return 0
    d3 = _dsp_dwk(c)
    if d3 is not None:
        return d3
    if not (c["opg"] == 1 and c["x"]["sc"] == 1 and c["x"]["c"] >= 4):
        return 0
    return 4 * O if c["KH"] == 3 and c["KW"] == 3 and O <= b["CM_DSP_DW_C"] else 0


def _group(c: dict) -> dict | None:
    """conv.c qconv_group: one group of a grouped convolution as a dense one (None: not grouped)."""
    if c["depthwise"] or c["x"]["c"] // c["cpg"] <= 1:
        return None
    return dict(c, x=dict(c["x"], c=c["cpg"]), y=dict(c["y"], c=c["opg"]))


def _conv(args: list, isa_: str, nhwc: bool) -> int:
    c = qconv(args, False, nhwc)
    if not c or isa_ == "plain":
        return 0
    if isa_ == "mve":
        return qconv_mve(_group(c) or c)
    g = _group(c)
    if g and c["x"]["sc"] == 1:   # conv.c dsp_group_dense: the group's channels copied dense first
        x = c["x"]
        dense = dict(g, x=dict(g["x"], sw=c["cpg"], sh=x["w"] * c["cpg"], sn=x["h"] * x["w"] * c["cpg"]))
        return _a16(x["n"] * x["h"] * x["w"] * c["cpg"]) + dsp_conv(dense)
    return dsp_conv(c)


def _depthwise(args: list, isa_: str, nhwc: bool) -> int:
    c = qconv(args, True, nhwc)
    if not c or isa_ == "plain":
        return 0
    if isa_ == "dsp":
        return max(dsp_dw(c), dsp_dw_as_conv(c))
    p = qdw_patch(c)   # its shapes: its scratch only (depthwise.c qdw_scratch)
    return p or max(qdw_plane(c), qdw_as_conv(c), qdw_lanes(c))


# operator -> bytes(args, isa); every operator with ET_SCRATCH in its kernel file needs an entry
FORMULAS = {
    "cortex_m::quantized_conv2d.out": lambda a, i: _conv(a, i, False),
    "cortex_m::quantized_conv2d_nhwc.out": lambda a, i: _conv(a, i, True),
    "cortex_m::quantized_depthwise_conv2d.out": lambda a, i: _depthwise(a, i, False),
    "cortex_m::quantized_depthwise_conv2d_nhwc.out": lambda a, i: _depthwise(a, i, True),
    "cortex_m::quantized_linear.out": lambda a, i: dsp_linear(a) if i == "dsp" else 0,
}


# operator -> argument index our kernel never touches: executorch's `Tensor scratch` (sized for CMSIS-NN),
# planned in the arena for that call only; scratch_place may put the call's own scratch over it
UNTOUCHED_ARG = {
    "cortex_m::quantized_conv2d.out": 12, "cortex_m::quantized_conv2d_nhwc.out": 12,
    "cortex_m::quantized_depthwise_conv2d.out": 13, "cortex_m::quantized_depthwise_conv2d_nhwc.out": 13,
}


def untouched(method):
    """k -> the value indices instruction k's kernel never touches (for scratch_place.place)."""
    def f(k: int) -> list[int]:
        kind, _, _, args = method.instr_uses[k]
        if kind != "KernelCall":
            return []
        oi = next((o for kk, o, _ in method.calls if kk == k), None)
        op = method.operators[oi] if oi is not None and 0 <= oi < len(method.operators) else ""
        i = UNTOUCHED_ARG.get(op)
        return [args[i]] if i is not None and i < len(args) else []
    return f


def call_bytes(op: str, args: list, isa_: str) -> int:
    """Scratch bytes one call of `op` needs on an `isa_` board (0: none)."""
    if isa_ not in ISAS:
        raise ValueError(f"isa must be one of {ISAS}, got {isa_!r}")
    f = FORMULAS.get(op)
    return f(args, isa_) if f else 0


def plan(method, cat: dict, isa_: str) -> list[int]:
    """Per instruction of the method (all chains, in order): the scratch bytes bake plans for it (0 for
    instructions that are not calls of an ET_SCRATCH operator)."""
    out = [0] * method.instructions
    for k, oi, args in method.calls:
        op = method.operators[oi] if 0 <= oi < len(method.operators) else ""
        kern = cat.get(op)
        if kern is not None and kern.scratch:
            if op not in FORMULAS:
                raise BakeError(f"kernel for {op} declares ET_SCRATCH but tools/etdeploy/kernel_scratch.py has no "
                                f"formula for it")
            out[k] = call_bytes(op, args, isa_)
    return out
