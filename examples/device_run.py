"""Flash-and-run script: build a .pte for a board, flash it through a GDB server, run it with an input
file over the board's serial port, print the top result.

    python examples/device_run.py --board corstone300 --pte tests/models/mlp.pte --input x.npy \\
        --gdb localhost:3333 --port /dev/ttyACM0

Exit status: 0 on a judged pass, else the error's etdeploy exit code (11 timeout, 12 fault, 16 link...)."""
import argparse
import sys

import numpy as np

from etdeploy import api


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", required=True)
    ap.add_argument("--pte", required=True)
    ap.add_argument("--input", required=True, help=".npy file for the forward method's input")
    ap.add_argument("--gdb", help="GDB server HOST:PORT (default: the board's [flash] method)")
    ap.add_argument("--port", required=True, help="serial port: /dev/ttyACM0, socket://HOST:PORT ...")
    ap.add_argument("--build-dir", help="where the image is built (default build/)")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args(argv)
    try:
        img = api.build(a.board, a.pte, build_dir=a.build_dir, inputs_over_link=True)
        # The port is opened before the image is flashed and started: nothing it says early is lost.
        run = api.run(img, port=a.port, gdb=a.gdb, inputs=[np.load(a.input)], timeout=a.timeout)
    except api.EtdeployError as e:
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return e.exit_code
    if run.flashed is not None:
        print(f"flashed {img.elf.name} through {run.flashed.server}: {len(run.flashed.sections)} section(s) verified")
    scores = run.outputs[0].reshape(-1)
    top = int(scores.argmax())
    print(f"{run.status}: top class {top} (score {scores[top]:.4f}) in {run.seconds:.2f} s; results in {run.run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
