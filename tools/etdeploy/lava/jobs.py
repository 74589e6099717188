"""One LAVA job definition per (board, image), from the board's data.

The farm method comes from the board's TOML, never its name: a QEMU emulator -> LAVA's qemu boot
(the board's machine, the image as -kernel); an FVP -> the fvp boot; otherwise the board's flash
method: mps3 (the USB drive with images.txt) and uf2 (a mass-storage copy) -> LAVA's mps deploy and
a minimal boot; pyocd -> the pyocd boot. Every job ends with the same test action: a monitor
that waits for the firmware's verdict line (images built with link=text), never for silence."""
from __future__ import annotations

import re
from pathlib import Path

from . import NoFarmMethod

# What a link=text image prints (firmware/runtime/et_link.c): frames as "ETL:<hex>" lines, after
# the result frame "ET-RESULT <pass|fail> status=.. cases=.. failed=.. seq=.. crc=<8 hex>", "ET-END".
TEXT_IMAGE_MARK = b"ET-RESULT "
VERDICT_RE = (r"(?P<test_case_id>ET-RESULT) (?P<result>pass|fail) status=\d+ cases=\d+ failed=\d+ seq=\d+ "
              r"crc=[0-9a-f]{8}")
MONITOR = {"name": "etdeploy", "start": "ETL:", "end": "ET-END", "pattern": VERDICT_RE}

DEPLOY_S, BOOT_S, SLACK_S = 60, 30, 30
IMAGE_SUFFIX = {"qemu": ".elf", "fvp": ".elf", "mps3": ".bin", "uf2": ".uf2", "pyocd": ".hex"}


def farm_method(board, prefer: str | None = None) -> str:
    """qemu | fvp | mps3 | uf2 | pyocd, from the board's data."""
    emu, fvp, flash = board.emulator, board.fvp, board.flash
    have = []
    if emu is not None and emu.kind == "qemu-system":
        have.append("qemu")
    if fvp is not None:
        have.append("fvp")
    if flash is not None and flash.method in ("mps3", "uf2", "pyocd"):
        have.append(flash.method)
    if prefer:
        if prefer not in have:
            raise NoFarmMethod(f"board '{board.name}' has no farm method '{prefer}'; it has: "
                               f"{', '.join(have) or 'none'}")
        return prefer
    if not have:
        raise NoFarmMethod(f"board '{board.name}' has no farm method (no QEMU system emulator, FVP, or "
                           f"mps3/uf2/pyocd flash method in {board.path.name if board.path else 'its TOML'})")
    return have[0]


def is_text_image(elf: Path) -> bool:
    return TEXT_IMAGE_MARK in Path(elf).read_bytes()


def _secs(s: float) -> dict:
    return {"seconds": max(1, int(round(s)))}


def _url(path: Path, image_url: str | None) -> str:
    return f"{image_url.rstrip('/')}/{path.name}" if image_url else path.resolve().as_uri()


def job_name(board, stem: str) -> str:
    return re.sub(r"[^-_a-zA-Z0-9.]+", "_", f"etdeploy-{board.name}-{stem}")[:200]


def qemu_arch(binary: str) -> str:
    arch = binary.rsplit("qemu-system-", 1)[-1]
    return {"aarch64": "arm64"}.get(arch, arch)


def qemu_options(board) -> list[str]:
    """The board's QEMU arguments without the machine and the image (LAVA adds those)."""
    args, out, i = list(board.emulator.args), [], 0
    while i < len(args):
        a = args[i]
        if a in ("-M", "-machine", "-kernel", "-cpu") and i + 1 < len(args):
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def build(board, elf: Path, stem: str, timeout: float, out_dir: Path, method: str | None = None,
          image_url: str | None = None, docker_image: str = "fvp") -> tuple[dict, dict]:
    """(job, side files {name: text} that go to out_dir with it) for the image
    (the ELF; the .bin/.hex/.uf2 next to it for flashed boards). image_url: where the farm fetches images (default file://)."""
    method = farm_method(board, method)
    elf = Path(elf).resolve()
    image = elf.with_suffix(IMAGE_SUFFIX[method])
    if not image.exists():
        from ..errors import ImageError
        raise ImageError(f"farm method '{method}' of board '{board.name}' needs {image.name} next to {elf.name}: "
                         f"build the image for {board.name} (scons board={board.name} pte=... link=text)")
    name = job_name(board, stem)
    side: dict[str, str] = {}
    if method == "qemu":
        deploy = {"to": "tmpfs", "images": {"kernel": {"url": _url(image, image_url), "image_arg": "-kernel {kernel}"}}}
        boot = {"method": "qemu", "media": "tmpfs"}
        ctx = {"arch": qemu_arch(board.emulator.binary), "machine": board.emulator.machine or board.name,
               "extra_options": qemu_options(board)}
        if board.emulator.cpu:
            ctx["cpu"] = board.emulator.cpu
    elif method == "fvp":
        s = board.fvp
        p = s.board_prefix
        params = [f"{p}.visualisation.disable-visualisation=1", f"{p}.uart0.shutdown_on_eot=1",
                  f"{p}.uart0.unbuffered_output=1"]
        if s.macs_param and board.npu is not None:
            params.append(f"{s.macs_param}={board.npu.macs}")
        params += list(s.params)
        args = [a for prm in params for a in ("-C", prm)] + ["-a", "{TEST_BINARY}", "--timelimit", str(int(timeout))]
        deploy = {"to": "fvp", "images": {"test_binary": {"url": _url(image, image_url)}}}
        boot = {"method": "fvp", "image": f"/opt/model/{s.binary}", "arguments": args,
                "console_string": r"terminal_0: Listening for serial connection on port (?P<PORT>\d+)",
                "prompts": ["ETL:"], "docker": {"name": docker_image, "local": "/" not in docker_image}}   # a registry image is pulled
        ctx = {}
    elif method in ("mps3", "uf2"):
        images = {"test_binary_1": {"url": _url(image, image_url),
                                    "rename": "SOFTWARE/etdeploy.bin" if method == "mps3" else image.name}}
        if method == "mps3":
            from ..flash import mps3_images_txt
            txt = f"{name}.images.txt"
            side[txt] = mps3_images_txt(board.flash)
            images["test_binary_2"] = {"url": _url(Path(out_dir) / txt, image_url),
                                       "rename": board.flash.images_txt}
        deploy = {"to": "mps", "images": images}
        boot = {"method": "minimal"}
        ctx = {}
    else:   # pyocd
        deploy = {"to": "tmpfs", "images": {"binary": {"url": _url(image, image_url), "image_arg": "{binary}"}}}
        boot = {"method": "pyocd"}
        ctx = {}
    deploy["timeout"] = _secs(DEPLOY_S)
    boot["timeout"] = _secs(BOOT_S)
    test = {"timeout": _secs(timeout), "monitors": [dict(MONITOR)]}
    job = {
        "job_name": name,
        "device_type": device_type(board, method),
        "visibility": "public",
        "priority": "medium",
        "timeouts": {"job": _secs(DEPLOY_S + BOOT_S + timeout + SLACK_S), "connection": _secs(timeout)},
        "metadata": {"etdeploy.board": board.name, "etdeploy.image": str(elf),
                     "etdeploy.timeout": str(timeout), "etdeploy.method": method},
        "actions": [{"deploy": deploy}, {"boot": boot}, {"test": test}],
    }
    if ctx:
        job["context"] = ctx
    return job, side


def device_type(board, method: str) -> str:
    """LAVA device types: stock 'qemu' and 'fvp'; hardware by the board's name (mps3-an547, ...)."""
    if method in ("qemu", "fvp"):
        return method
    return board.name


def write(job: dict, side: dict, out_dir: Path) -> Path:
    """The job as <job_name>.yaml (and its side files), written whole or not at all."""
    import yaml
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{job['job_name']}.yaml"
    for fname, text in side.items():
        _atomic(out_dir / fname, text)
    _atomic(path, yaml.safe_dump(job, sort_keys=False, width=1000))
    return path


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
