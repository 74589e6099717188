"""A fault injector on a TCP serial line: sits between an emulator's UART socket (QEMU
`-serial tcp:...,server=on`) and the host that reads it, and flips, drops and duplicates bytes at a
given rate, reproducibly from a seed. It tests the link layer's promise (link.py): a damaged frame is
counted and dropped, never written into a result.

    proxy = FaultProxy(upstream_port, rate=1e-3, seed=1)   # listens on proxy.port
    ... connect the host to 127.0.0.1:proxy.port ...
    proxy.close(); proxy.stats -> {"bytes": .., "flipped": .., "dropped": .., "duplicated": ..}

`FaultyQemuRunner` is the qemu-system runner with the proxy in the path (runner name
"qemu-system+faults"); `installed(rate, seed)` registers it for `session.run(..., runner=...)`.
As a program: `python -m etdeploy.faultproxy --target PORT [--listen PORT] [--rate 1e-3]`.
"""
from __future__ import annotations

import argparse
import contextlib
import random
import select
import socket
import threading
import time
from dataclasses import asdict, dataclass

from .errors import RunError


@dataclass
class FaultStats:
    bytes: int = 0          # bytes that passed target -> host (before faults)
    flipped: int = 0
    dropped: int = 0
    duplicated: int = 0
    bytes_to_target: int = 0
    faults_to_target: int = 0

    @property
    def faults(self) -> int:
        return self.flipped + self.dropped + self.duplicated


class FaultInjector:
    """Pure byte-stream damage: each byte independently suffers one fault with probability `rate`."""

    def __init__(self, rate: float, seed: int | None = None, kinds=("flip", "drop", "dup")):
        if not 0 <= rate <= 1:
            raise ValueError(f"fault rate {rate} is not a probability")
        self.rate = rate
        self.rng = random.Random(seed)
        self.kinds = tuple(kinds)

    def apply(self, data: bytes, stats: FaultStats) -> bytes:
        if not self.rate or not data:
            return data
        out = bytearray()
        rng = self.rng
        for b in data:
            if rng.random() >= self.rate:
                out.append(b)
                continue
            kind = rng.choice(self.kinds)
            if kind == "flip":
                out.append(b ^ (1 << rng.randrange(8)))
                stats.flipped += 1
            elif kind == "drop":
                stats.dropped += 1
            else:
                out += bytes((b, b))
                stats.duplicated += 1
        return bytes(out)


class FaultProxy:
    """Listens on 127.0.0.1:<port>; on the first client, connects to the upstream port (retrying while
    the emulator starts) and forwards both ways, damaging target -> host bytes (and host -> target
    bytes when to_target=True)."""

    def __init__(self, upstream_port: int, rate: float = 1e-3, seed: int | None = None, listen_port: int = 0,
                 to_target: bool = False, connect_timeout: float = 20.0, kinds=("flip", "drop", "dup")):
        self.upstream_port = upstream_port
        self.stats = FaultStats()
        self.down = FaultInjector(rate, seed, kinds)
        self.up = FaultInjector(rate if to_target else 0.0, None if seed is None else seed + 1, kinds)
        self.connect_timeout = connect_timeout
        self.error: str | None = None
        self._srv = socket.socket()
        self._srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._srv.bind(("127.0.0.1", listen_port))
        self._srv.listen(1)
        self.port = self._srv.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"faultproxy:{self.port}", daemon=True)
        self._thread.start()

    def _connect_upstream(self) -> socket.socket | None:
        end = time.monotonic() + self.connect_timeout
        while not self._stop.is_set() and time.monotonic() < end:
            try:
                return socket.create_connection(("127.0.0.1", self.upstream_port), timeout=1.0)
            except OSError:
                time.sleep(0.05)
        self.error = f"could not connect to the target's serial port {self.upstream_port}"
        return None

    def _serve(self) -> None:
        self._srv.settimeout(0.2)
        client = None
        while not self._stop.is_set():
            try:
                client, _ = self._srv.accept()
                break
            except socket.timeout:
                continue
            except OSError:
                return
        if client is None:
            return
        up = self._connect_upstream()
        if up is None:
            client.close()
            return
        client.setblocking(False)
        up.setblocking(False)
        pending = {client: b"", up: b""}       # bytes waiting to be written to that socket
        try:
            while not self._stop.is_set():
                wr = [s for s, buf in pending.items() if buf]
                r, w, _ = select.select([client, up], wr, [], 0.1)
                for s in w:
                    n = s.send(pending[s])
                    pending[s] = pending[s][n:]
                for s in r:
                    data = s.recv(65536)
                    if not data:      # one side closed: flush what is pending to the other, then stop
                        other = client if s is up else up
                        with contextlib.suppress(OSError):
                            other.setblocking(True)
                            other.sendall(pending[other])
                        return
                    if s is up:
                        self.stats.bytes += len(data)
                        pending[client] += self.down.apply(data, self.stats)
                    else:
                        self.stats.bytes_to_target += len(data)
                        before = self.stats.faults
                        pending[up] += self.up.apply(data, self.stats)
                        self.stats.faults_to_target += self.stats.faults - before
        except OSError as e:
            self.error = str(e)
        finally:
            for s in (client, up):
                with contextlib.suppress(OSError):
                    s.close()

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._srv.close()
        self._thread.join(timeout=5)

    def summary(self) -> dict:
        return asdict(self.stats) | {"faults": self.stats.faults, "rate": self.down.rate}


# ------------------------------------------------------------------------------------------- runner

def _qemu_classes():
    from .runners.qemu import QemuSystemRunner, QemuUartSession, free_port
    return QemuSystemRunner, QemuUartSession, free_port


def make_runner_class(rate: float, seed: int | None = None, to_target: bool = False, sink: list | None = None):
    """A qemu-system runner whose UART passes through a FaultProxy; each proxy is appended to `sink`."""
    QemuSystemRunner, QemuUartSession, free_port = _qemu_classes()
    from .runners.base import ProcessSession
    from .runners.process import _need

    class FaultyQemuRunner(QemuSystemRunner):
        name = "qemu-system+faults"

        def start(self, elf: str, **kw):
            port = free_port()
            argv = self.command(elf, port=port, **kw)
            _need(argv[0], getattr(self.board.emulator, "package", "qemu-system-arm"))
            self.log_command(argv, f"   (via a fault proxy, rate {rate:g})")
            proxy = FaultProxy(port, rate=rate, seed=seed, to_target=to_target)
            if sink is not None:
                sink.append(proxy)
            proc = ProcessSession(argv, link_on_stdout=False)
            try:
                sess = QemuUartSession(proc, proxy.port)
            except RunError:
                proxy.close()
                raise
            close = sess.close

            def close_both():
                close()
                proxy.close()
            sess.close = close_both
            return sess
    return FaultyQemuRunner


@contextlib.contextmanager
def installed(rate: float = 1e-3, seed: int | None = None, to_target: bool = False):
    """Registers runner 'qemu-system+faults' for session.run(); yields the list of proxies used."""
    from . import runners
    runners.load_all()
    proxies: list[FaultProxy] = []
    runners.RUNNERS["qemu-system+faults"] = make_runner_class(rate, seed, to_target, proxies)
    try:
        yield proxies
    finally:
        runners.RUNNERS.pop("qemu-system+faults", None)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Fault-injecting TCP proxy for an emulator's serial port")
    ap.add_argument("--target", type=int, required=True, help="the emulator's serial TCP port")
    ap.add_argument("--listen", type=int, default=0)
    ap.add_argument("--rate", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--to-target", action="store_true", help="damage host -> target bytes too")
    a = ap.parse_args(argv)
    p = FaultProxy(a.target, a.rate, a.seed, a.listen, a.to_target, connect_timeout=3600)
    print(f"listening on 127.0.0.1:{p.port} -> 127.0.0.1:{a.target}, rate {a.rate:g}", flush=True)
    try:
        while p._thread.is_alive():
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    p.close()
    print(p.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
