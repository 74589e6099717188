"""Flash through any GDB server (board key `[flash] method = "gdb"`, `target = "HOST:PORT"`, or
`etdeploy flash --gdb HOST:PORT`): pyOCD's gdbserver, OpenOCD, SEGGER J-Link GDB Server, a Black
Magic Probe (a /dev/tty path) and QEMU's -gdb all speak the GDB remote protocol, so one path serves
them all. Debian's gdb-multiarch does the protocol: it loads the ELF's segments, verifies them
(compare-sections), and we point the core at the image's vector table (VTOR, SP, PC) before it is
let go (detach), which works on every server without knowing its reset command.

Checks before anything is written: the server answers, and on Cortex-M the core it reports (CPUID)
is the board's (cortex_m_cpuid.json)."""
from __future__ import annotations

import json
import re
import shlex
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import DeviceNotFound, FlashError
from . import register
from .base import Capabilities, Runner, need_binary

GDB = "gdb-multiarch"
CPUIDS = {k: v for k, v in json.loads(Path(__file__).with_name("cortex_m_cpuid.json").read_text()).items()
          if not k.startswith("_")}
OK = "ETDEPLOY-FLASH-DONE"
VTOR = 0xE000ED08
CPUID = 0xE000ED00


@dataclass
class FlashReport:
    server: str
    sections: list            # [(name, "matched")]
    entry: int
    stack: int
    cpuid: int | None
    seconds: float = 0.0


def vector_table(elf: Path) -> tuple[int, int, int]:
    """(address, initial SP, reset PC) of a Cortex-M image: bsp_vectors, else the lowest loaded word."""
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        e = ELFFile(f)
        tab = e.get_section_by_name(".symtab")
        syms = tab.get_symbol_by_name("bsp_vectors") if tab else None
        segs = [s for s in e.iter_segments() if s["p_type"] == "PT_LOAD" and s["p_filesz"]]
        addr = syms[0]["st_value"] if syms else min(s["p_vaddr"] for s in segs)
        for s in segs:
            if s["p_vaddr"] <= addr and addr + 8 <= s["p_vaddr"] + s["p_filesz"]:
                sp, pc = struct.unpack_from("<II", s.data(), addr - s["p_vaddr"])
                return addr, sp, pc
    raise FlashError(f"{elf}: no vector table among its loaded segments")


def entry_point(elf: Path) -> int:
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        return ELFFile(f).header["e_entry"]


def target_command(server: str) -> list[str]:
    """gdb commands that attach to a server: HOST:PORT (TCP) or a Black Magic Probe's /dev/tty."""
    if server.startswith("/dev/") or server.upper().startswith("COM"):
        # Black Magic Probe: the probe is the server; scan the SWD bus and attach the first core.
        return [f"target extended-remote {server}", "monitor swdp_scan", "attach 1"]
    if ":" not in server:
        raise FlashError(f"GDB server '{server}' is not HOST:PORT (e.g. localhost:3333) or a /dev/tty path")
    return [f"target remote {server}"]


def script(board, elf: Path, server: str, load: bool = True) -> str:
    """The gdb command file: attach, report the core, (reset,) load, verify, point the core at the image."""
    cortex_m = getattr(board, "family", "") == "cortex-m"
    vt, sp, pc = vector_table(elf) if cortex_m else (0, 0, entry_point(elf))
    # No auto-retry: a server that is not there is one line, not 15 s of retries.
    lines = ["set pagination off", "set confirm off", "set tcp auto-retry off", "set tcp connect-timeout 5",
             *target_command(server)]
    if cortex_m:
        lines.append(f"printf \"ETDEPLOY-CPUID 0x%08x\\n\", *(unsigned int *){CPUID:#x}")
    # Probes reset the SoC with their own monitor command; QEMU has none and needs none (-S, fresh).
    lines += ["python", "try:", "    gdb.execute('monitor reset halt', to_string=True)",
              "except gdb.error:", "    pass", "end"]
    if load:
        lines += ["load", "compare-sections"]
    if cortex_m:
        lines += [f"set *(unsigned int *){VTOR:#x} = {vt:#x}", f"set $sp = {sp:#x}", f"set $msp = {sp:#x}",
                  f"set $pc = {pc & ~1:#x}", "set $xpsr = 0x01000000"]
    else:
        lines.append(f"set $pc = {pc:#x}")
    lines += ["detach", f"echo {OK}\\n"]
    return "\n".join(lines) + "\n"


def _check_cpu(board, out: str) -> int | None:
    m = re.search(r"ETDEPLOY-CPUID 0x([0-9a-f]{8})", out)
    if not m:
        return None
    cpuid = int(m.group(1), 16)
    want = CPUIDS.get(getattr(board, "cpu", ""))
    part = (cpuid >> 4) & 0xFFF
    if want is not None and part != int(want, 16):
        names = {int(v, 16): k for k, v in CPUIDS.items()}
        raise FlashError(f"the GDB server's core is {names.get(part, f'part 0x{part:03x}')} (CPUID 0x{cpuid:08x}), "
                         f"the image is for board '{board.name}' ({board.cpu}): nothing written")
    return cpuid


def gdb_flash(board, elf, server: str, log=print, load: bool = True, timeout: float = 120.0) -> FlashReport:
    """Loads and verifies elf through the GDB server, then lets the core run from the image's reset vector.
    load=False only resets the core into the image already there."""
    import time
    elf = Path(elf)
    if not elf.exists():
        raise FlashError(f"no image at {elf}: build it first (scons board={board.name} pte=...)")
    gdb = need_binary(GDB, GDB)
    cmd_file = elf.parent / "etdeploy-flash.gdb"
    cmd_file.write_text(script(board, elf, server, load=load))
    argv = [gdb, "-nx", "-batch", "-x", str(cmd_file), str(elf)]
    log("$ " + " ".join(shlex.quote(a) for a in argv))
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise FlashError(f"gdb did not finish loading through {server} in {timeout:g} s") from None
    out = p.stdout + p.stderr
    if re.search(r"Connection refused|Connection timed out|No route to host|could not connect|"
                 r"No such file or directory\.|Name or service not known|not responding", out, re.I) \
            and "ETDEPLOY-CPUID" not in out:
        last = next((l for l in reversed(out.splitlines()) if l.strip()), "")
        raise DeviceNotFound(f"no GDB server at {server} ({last.strip()}): start pyocd gdbserver / openocd / "
                             f"JLinkGDBServer, or give --gdb HOST:PORT")
    cpuid = _check_cpu(board, out)
    bad = [l for l in out.splitlines() if "MIS-MATCHED" in l]
    if bad:
        raise FlashError(f"verification after load failed through {server}: {bad[0].strip()} "
                         f"(is the region writable on this board? is the image for another board?)")
    if OK not in out:
        errs = [l.strip() for l in out.splitlines() if re.search(r"error|cannot|failed|denied|Remote failure", l, re.I)]
        raise FlashError(f"gdb could not {'load' if load else 'reset'} {elf.name} through {server}: "
                         f"{(errs or [out.strip()[-300:]])[0]}")
    sections = re.findall(r"Section (\S+), range .*?: (matched)", out)
    vt, sp, pc = vector_table(elf) if getattr(board, "family", "") == "cortex-m" else (0, 0, entry_point(elf))
    return FlashReport(server=server, sections=sections, entry=pc, stack=sp, cpuid=cpuid,
                       seconds=time.monotonic() - t0)


@register
class GdbServerRunner(Runner):
    name = "gdb"
    caps = Capabilities(run=False, exit_status=False, link_rx=False, flash=True)

    def __init__(self, board, log=None, server: str | None = None):
        super().__init__(board, log)
        spec = getattr(board, "flash", None)
        self.server = server or (spec.target if spec is not None and spec.method == "gdb" else "") or "localhost:3333"

    def available(self) -> None:
        need_binary(GDB, GDB)

    def flash_commands(self, image_dir, drive: str | None = None) -> list[list[str]]:
        elf = Path(image_dir) / "firmware.elf"
        return [[GDB, "-nx", "-batch", "-x", str(elf.parent / "etdeploy-flash.gdb"), str(elf)]]

    def flash(self, image_dir, drive: str | None = None, dry_run: bool = False) -> FlashReport | None:
        elf = Path(image_dir) / "firmware.elf"
        if dry_run:
            self.log("$ " + " ".join(self.flash_commands(image_dir)[0]))
            if elf.exists():
                self.log(script(self.board, elf, self.server))
            return None
        rep = gdb_flash(self.board, elf, self.server, log=self.log)
        self.log(f"flashed {elf.name} through {self.server}: {len(rep.sections)} section(s) verified, "
                 f"entry 0x{rep.entry:08x}")
        return rep
