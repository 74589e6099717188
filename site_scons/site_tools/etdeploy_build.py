"""SCons tool `etdeploy_build`: build options, the board and its toolchain, compile and link.
All decisions come from the etdeploy package (config, buildenv, ldscript); this file only maps
them onto SCons. Errors are printed as one readable line and end the build. (Named apart from the
package so that SCons' module for this tool never shadows `import etdeploy`.)"""
import os
import sys

import SCons.Script as S

OPTION_HELP = "etdeploy options (scons name=value ...)"


def options(opts):
    from etdeploy.exporting import USER_FLOWS   # light: executorch is imported only when exporting
    opts.Add("board", "board(s) to build, comma-separated (`scons boards` lists them)", "host")
    opts.Add("pte", "program(s) to bake in: comma-separated .pte/.bpte paths (none: the minimal image)", "")
    opts.Add("model", "<file.py>:<name>: export the model for the board (again only when it changes) and build "
             "it; or a fixture name from tests/models", "")
    opts.Add(S.BoolVariable("quantize", "model=: int8 with the board's flow (Ethos-U, Cortex-M or PT2E)", False))
    opts.Add(S.EnumVariable("flow", "model=: override the board's export flow", "",
                            allowed_values=("",) + USER_FLOWS))
    opts.Add("calibration", "model=: calibration samples (.npy/.npz) for quantize=1", "")
    opts.Add("model_region", "memory region for the model bytes (default: the first of the board's [placement] "
             "model regions where it fits)", "")
    opts.Add("arena_region", "memory region for planned arenas, and for method pools unless pool_region= is given "
             "(default: the first of the board's arena regions where they fit)", "")
    opts.Add("pool_region", "memory region for method pools (default: the first of the board's pool regions where "
             "they fit)", "")
    opts.Add(S.BoolVariable("lib", "build build/<board>/lib/ instead of an image: libetmodel.a, etmodel.h and "
                            "CMake/Zephyr/PlatformIO glue for your own firmware (one pte=)", False))
    opts.Add(S.BoolVariable("run", "run the image after building (emulator, host or device, from board data)",
                            False))
    opts.Add("timeout", "run timeout in seconds", "60")
    opts.Add(S.EnumVariable("etdump", "profiling events: 0 off, 1 per-operator cycles, debug also values", "0",
                            allowed_values=("0", "1", "debug")))
    opts.Add("atol", "absolute tolerance when comparing outputs with a .bpte's expected outputs", "1e-5")
    opts.Add("rtol", "relative tolerance when comparing outputs", "1e-5")
    opts.Add(S.EnumVariable("opt", "optimisation level (-O<opt>)", "2",
                            allowed_values=("0", "1", "2", "3", "s", "z", "g")))
    opts.Add(S.EnumVariable("inputs", "baked: default inputs / bundled cases; link: the host sends inputs",
                            "baked", allowed_values=("baked", "link")))
    opts.Add(S.EnumVariable("link", "binary: COBS frames on the UART; text: the same frames as hex lines and a "
                            "CRC-checked verdict line, for console matchers (LAVA)", "binary",
                            allowed_values=("binary", "text")))
    opts.Add("ethosu_driver", "path to Arm's ethos-u-core-driver, for programs delegated to Ethos-U", "")
    opts.Add("runner", "override the board's runner for run=1 (e.g. fvp)", "")
    opts.Add("threads", "threads for XNNPACK-delegated programs (host; a pthreadpool of N threads)", "")
    opts.Add(S.BoolVariable("icount", "deterministic QEMU instruction counting (-icount shift=0)", False))
    opts.Add("stack_size", "bare metal: override the board's [placement] stack_size (bytes, or 16K)", "")
    opts.Add(S.BoolVariable("stack_paint", "bare metal: paint the stack and print the bytes used at exit "
                            "(semihosting), to check the build's worst-case stack", False))
    opts.Add("build_dir", "where build/<board>/ trees go (default: build in the repo)", "build")
    opts.Add(S.BoolVariable("verbose", "print full command lines instead of short progress lines", False))


def exists(env):
    return True


def fail(err):
    """Print an etdeploy error and stop (exit code from the error class)."""
    sys.stderr.write(f"etdeploy: error: {err}\n")
    S.Exit(getattr(err, "exit_code", 2))


def _only_listing():
    t = set(S.COMMAND_LINE_TARGETS)
    return S.GetOption("help") or (t and t <= {"boards"})


def generate(env, unknown=None, **kw):
    from etdeploy import config, errors
    if unknown:
        fail(errors.UnknownOption(sorted(unknown), sorted(k for k in env["ETD_OPTION_NAMES"])))
    env["ETD_ROOT"] = str(config.ROOT)
    env["ETD_FAIL"] = fail
    env["ETD_BUILD_DIR"] = build_dir(env)
    names = [b.strip() for b in env.get("board", "host").split(",") if b.strip()]
    env["ETD_BOARDS"] = []
    if _only_listing():
        return
    try:
        env["ETD_BOARDS"] = [config.load_board(n) for n in names]
    except errors.EtdeployError as e:
        fail(e)
    env.AddMethod(board_env, "EtBoard")


def build_dir(env, name=None):
    """#build (or the build_dir option, absolute or relative to the top dir), / name."""
    d = env.get("build_dir") or "build"
    d = d if os.path.isabs(d) else "#" + d
    return f"{d}/{name}" if name else d


def _defines(d):
    """C string values ("...") escaped for the shell command line."""
    out = []
    for k, v in d.items():
        if isinstance(v, str) and len(v) >= 2 and v[0] == v[-1] == '"':
            v = '\\"' + v[1:-1] + '\\"'
        out.append((k, v))
    return out


def _quiet(env):
    if env.get("verbose"):
        return
    env["CCCOMSTR"] = "CC $SOURCE"
    env["ASPPCOMSTR"] = "AS $SOURCE"
    env["ASCOMSTR"] = "AS $SOURCE"
    env["LINKCOMSTR"] = "LD $TARGET"


def board_env(env, board):
    """A clone of env set up for one board: toolchain tool, flags, defines, output dir."""
    from etdeploy import buildenv, errors
    try:
        plan = buildenv.plan(board, env.get("opt", "2"))
        for opt in ("model_region", "arena_region", "pool_region"):
            if env.get(opt):
                buildenv.check_region(board, env[opt], opt)
    except errors.EtdeployError as e:
        fail(e)
    if env.get("stack_size") and board.placement is not None:
        import dataclasses
        from etdeploy import config
        try:
            size = config.parse_size(env["stack_size"], "stack_size")
        except errors.EtdeployError as e:
            fail(e)
        board = dataclasses.replace(board, placement=dataclasses.replace(board.placement, stack_size=size))
    benv = env.Clone()
    benv["ETD_BOARD"] = board
    benv["ETD_PLAN"] = plan
    benv["ETD_OUT"] = benv.Dir(build_dir(env, board.name))
    benv.Tool(plan.toolchain.tool)
    _quiet(benv)
    benv.AddMethod(firmware, "EtFirmware")
    return benv


def _obj_path(env, src):
    from pathlib import Path
    out = Path(env["ETD_OUT"].abspath)
    src = Path(str(src)).resolve()
    root = Path(env["ETD_ROOT"])
    try:
        rel = src.relative_to(out)
        rel = Path("gen") / rel.relative_to("gen") if rel.parts[0] == "gen" else rel
    except ValueError:
        try:
            rel = src.relative_to(root)
        except ValueError:
            rel = Path("ext") / src.name
    return str(out / "obj" / rel.with_suffix(".o"))


def firmware(env, unit, arena_region=None):
    """Compile the build unit (etdeploy.buildenv.BuildUnit: sources, include dirs, defines and flags,
    the same description the host tests compile), link build/<board>/firmware.elf (+ firmware.map)."""
    from etdeploy import errors, ldscript
    board, plan, out = env["ETD_BOARD"], unit.plan, env["ETD_OUT"]
    e = env.Clone()
    e.Append(CCFLAGS=plan.ccflags, CFLAGS=plan.cflags, LINKFLAGS=plan.linkflags, LIBS=plan.libs,
             CPPPATH=[str(d) for d in unit.include_dirs], CPPDEFINES=_defines(unit.defines))
    if plan.linker_script:   # bare metal: per-function frames and call edges for etdeploy.stack_budget
        e.Append(CCFLAGS=["-fstack-usage", "-fcallgraph-info=su"])
        if env.get("stack_paint"):
            e.Append(CPPDEFINES=[("BSP_STACK_PAINT", 1)])
    objs = []
    for src in unit.sources:
        o = e.Object(target=_obj_path(e, src), source=str(src))
        if unit.depends and unit.is_generated(src):   # only the generated C .incbin's the blobs
            e.Depends(o, [str(d) for d in unit.depends])
        objs += o
    elf = out.File("firmware.elf")
    mapf = out.File("firmware.map")
    e.Append(LINKFLAGS=[f"-Wl,-Map,{mapf.abspath}"])
    if plan.linker_script:
        try:
            text = ldscript.render(board, arena_region or None, placement=unit.placement)
        except errors.EtdeployError as err:
            fail(err)
        ld = out.File("firmware.gen.ld")

        def write_ld(target, source, env):
            with open(str(target[0]), "w") as f:
                f.write(source[0].get_contents().decode())
        e.Command(ld, e.Value(text), S.Action(write_ld, None if e.get("verbose") else "GEN $TARGET"))
        e.Append(LINKFLAGS=[f"-T{ld.abspath}"])
        e.Depends(elf, ld)
    prog = e.Program(target=elf, source=objs)
    e.SideEffect(mapf, prog)
    return prog
