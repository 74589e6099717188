"""SCons tool `etlib`: `scons board=<b> pte=<file> lib=1` builds build/<b>/lib/ (libetmodel.a,
etmodel.h, the CMake/Zephyr/PlatformIO glue) through etdeploy.library, the same code as
`etdeploy lib`. The library is the board's build unit without startup, main or board support."""
from pathlib import Path

import SCons.Script as S


def exists(env):
    return True


def _ptes(env):
    top = Path(env.Dir("#").abspath)
    ptes = [p.strip() for p in env.get("pte", "").split(",") if p.strip()]
    return [Path(p) if Path(p).is_absolute() else top / p for p in ptes]


def library(env):
    """The archive target; it runs etdeploy.library.build whenever a program or an option changes
    (build() itself recompiles only the objects whose source or flags changed)."""
    from etdeploy import errors
    ptes = _ptes(env)
    if len(ptes) != 1:
        env["ETD_FAIL"](errors.ConfigError(f"lib=1 takes exactly one program: pte=<file.pte|file.bpte> "
                                           f"(got {len(ptes)})"))
    try:    # refuse what the library cannot carry while SCons reads the build: one line, no build
        from etdeploy import library as et_library
        from etdeploy.pte import read_program
        if not ptes[0].exists():
            raise errors.BakeError(f"program file not found: {ptes[0]}")
        et_library.check_program([read_program(ptes[0])])
    except errors.EtdeployError as e:
        env["ETD_FAIL"](e)
    out = Path(env["ETD_OUT"].abspath) / "lib"
    opts = {k: env.get(k) for k in ("model_region", "arena_region", "pool_region") if env.get(k)}
    opt = env.get("opt", "2")

    def build(target, source, env):
        from etdeploy import library as et_library
        try:
            lib = et_library.build(ptes[0], env["ETD_BOARD"], out, opts, opt)
        except errors.EtdeployError as e:
            env["ETD_FAIL"](e)
        print(f"lib: {lib.archive} ({lib.report['archive_bytes']} B); sections to place: {', '.join(lib.sections)}")
        return 0
    archive = env.File(str(out / "lib" / "libetmodel.a"))
    srcs = [str(p) for p in ptes] + [env.Value(repr((sorted(opts.items()), opt, env["ETD_BOARD"].name)))]
    tgt = env.Command(archive, srcs, S.Action(build, None if env.get("verbose") else "LIB $TARGET"))
    env.AlwaysBuild(tgt)    # C sources live outside SCons' view here; build() is incremental itself
    return tgt


def generate(env):
    env.AddMethod(library, "EtLibrary")
