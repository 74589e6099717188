"""A stand-in for a board on the desk: QEMU started halted with no image (-S), its gdbstub standing for
the debug probe's GDB server and its UART on a TCP socket standing for the USB serial port. No
semihosting: like a real board, the image's exit has no host to reach (it faults and locks up).

    with StandIn("corstone300") as b:      # b.gdb = "127.0.0.1:PORT", b.port = "socket://127.0.0.1:PORT"
        etdeploy run --board corstone300 --gdb b.gdb --port b.port ...

QEMU waits (wait=on) for the serial connection before it starts, as the run opens the port first."""
from __future__ import annotations

import socket
import subprocess

from etdeploy import config

MACHINES = {"corstone300": "mps3-an547", "mps2-an386": "mps2-an386"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StandIn:
    def __init__(self, board: str):
        self.board = config.load_board(board)
        self.gdb_port, self.uart_port = free_port(), free_port()
        self.gdb = f"127.0.0.1:{self.gdb_port}"
        self.port = f"socket://127.0.0.1:{self.uart_port}"
        self.argv = ["qemu-system-arm", "-M", MACHINES[board], "-display", "none", "-monitor", "none", "-S",
                     "-gdb", f"tcp:127.0.0.1:{self.gdb_port}",
                     "-serial", f"tcp:127.0.0.1:{self.uart_port},server=on,wait=on"]
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "StandIn":
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)
        # Ready when QEMU says it waits for the serial client (a probe connection would take its place).
        line = self.proc.stderr.readline().decode(errors="replace")
        if "waiting for connection" not in line:
            self.__exit__()
            raise RuntimeError(f"the stand-in QEMU did not start: {line}")
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stderr.close()
