"""etdeploy export: a PyTorch model in a Python file -> .pte, .bpte and ETRecord with the real
executorch flow the board's data names (see etdeploy.export_spec)."""
from __future__ import annotations

import sys
from pathlib import Path

from etdeploy.exporting import USER_FLOWS

HELP = "export a PyTorch model (<file.py>:<name>) for a board: .pte, .bpte (test cases) and .etrecord"
FLOW_HELP = ("override the flow the board's data names: portable (float), pt2e (int8 on portable kernels), "
             "cortex_m (int8 cortex_m:: kernels), ethos_u (Vela, the board's NPU), xnnpack (XNNPACK delegate for "
             "Debian's XNNPACK on host and android-arm64; with --quantize: int8)")


def register(sub):
    p = sub.add_parser("export", help=HELP, description=HELP + ". Without --flow: xnnpack on boards whose [xnnpack] says "
                       "default_flow (host, android-arm64), else portable; with --quantize: the same xnnpack, ethos_u on "
                       "boards with an [npu], cortex_m on other Cortex-M boards, pt2e elsewhere.")
    p.add_argument("model", metavar="<file.py>:<name>",
                   help="an nn.Module class (or a function returning a module) in a Python file; example "
                        "inputs come from example_inputs() in the same file unless --inputs is given")
    p.add_argument("--board", required=True, help="the board whose data picks the flow (`etdeploy boards`)")
    p.add_argument("--quantize", action="store_true", help="int8: the board's quantized flow")
    p.add_argument("--flow", choices=USER_FLOWS, help=FLOW_HELP)
    p.add_argument("--calibration", metavar="FILE", help="calibration samples: .npy (N x input shape) or .npz "
                   "(one such array per input); default: the test-case inputs")
    p.add_argument("--inputs", metavar="FILE[,FILE]", help="example inputs as .npy/.npz instead of example_inputs()")
    p.add_argument("--cases", type=int, default=2, help="test cases in the .bpte: the example inputs, then random "
                   "inputs of the same shapes (default 2)")
    p.add_argument("--name", help="output file stem (default: <name>)")
    p.add_argument("-o", "--out-dir", default=None, help="output directory (default build/export/<board>)")
    p.add_argument("--force", action="store_true", help="export even if the outputs are up to date")
    p.set_defaults(func=main)
    return p


def main(args) -> int:
    from .. import config
    from ..export_spec import ModelSpec, export_for_board, flow_for_board
    board = config.load_board(args.board)
    spec = ModelSpec.parse(args.model)
    flow = flow_for_board(board, args.quantize, args.flow)
    out_dir = Path(args.out_dir) if args.out_dir else config.ROOT / "build" / "export" / board.name
    inputs = [Path(p) for p in args.inputs.split(",")] if args.inputs else []
    sys.stderr.write(f"[export] {spec} for {board.name}: flow {flow}\n")
    res, program = export_for_board(spec, board, out_dir, quantize=args.quantize, flow=args.flow, inputs=inputs,
                                    calibration=Path(args.calibration) if args.calibration else None,
                                    cases=args.cases, force=args.force, name=args.name)
    if res is None:
        print(f"up to date: {program}")
        return 0
    print(f"flow      {res.flow}  ({res.seconds:.1f} s)")
    print(f"program   {res.pte}")
    if res.bpte:
        print(f"bundle    {res.bpte}  ({res.cases} test cases)")
    print(f"etrecord  {res.etrecord}")
    for m, ops in res.operators.items():
        print(f"operators {m}: {', '.join(ops) or '(none)'}")
    if res.channels_last:
        print("layout    model and 4-d inputs put in channels_last (int8 convolutions); inputs given in NCHW "
              "are laid out by the program's dim order")
    if res.macs is not None and res.macs.total:
        from ..program_macs import format_table
        print(f"MACs      {res.macs.total:,} per inference, {100 * res.macs.int8_share:.1f}% in int8")
        print(format_table(res.macs, res.kept_float))
    elif res.kept_float:
        for op, why in res.kept_float.items():
            print(f"kept in float: {op} ({why})")
    if res.delegates:
        print(f"delegates {', '.join(res.delegates)}")
        if "EthosUBackend" in res.delegates:
            _vela_summary(res.pte)
        if "XnnpackBackend" in res.delegates:
            from ..xnnpack_delegate import summary
            print(summary(res.pte))
    print(f"build     {_scons_hint(board.name, Path(res.bpte or res.pte))}")
    return 0


def _vela_summary(pte: Path) -> None:
    from ..pte import read_program
    from .. import vela_payload
    prog = read_program(pte)
    for m in prog.methods:
        for d in m.delegates:
            if d.backend != "EthosUBackend":
                continue
            v = vela_payload.parse(prog.data[d.offset:d.offset + d.size])
            print(f"vela      {m.name}: command stream {v.cmd_bytes} B, weights {v.weight_bytes} B, "
                  f"scratch {v.scratch_bytes} B, inputs {[io.shape for io in v.inputs]}, "
                  f"outputs {[io.shape for io in v.outputs]}")


def _scons_hint(board: str, prog: Path) -> str:
    """The scons line that builds prog, runnable from where the user is (scons reads SConstruct in the root)."""
    from ..config import ROOT as root
    if Path.cwd().resolve() == root:
        return f"scons board={board} pte={prog}"
    return f"scons -C {root} board={board} pte={prog.resolve()}"
