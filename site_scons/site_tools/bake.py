"""SCons tool `bake`: turns pte= (or model=) into generated C + the runtime/kernel sources via
etdeploy.bake.bake, or, with no program, the minimal image
(firmware/boards/minimal_main.c). Bake runs while SCons reads the build; it rewrites its outputs
only when they change, so unchanged programs rebuild nothing."""
from pathlib import Path


def exists(env):
    return True


def _programs(env):
    root = Path(env["ETD_ROOT"])
    ptes = [p.strip() for p in env.get("pte", "").split(",") if p.strip()]
    if not ptes and ":" in env.get("model", ""):
        return [_export_model(env)]
    if not ptes and env.get("model"):
        from etdeploy.errors import BakeError
        for ext in (".bpte", ".pte"):
            cand = root / "tests" / "models" / f"{env['model']}{ext}"
            if cand.exists():
                ptes = [str(cand)]
                break
        else:
            raise BakeError(f"model={env['model']}: no tests/models/{env['model']}.bpte or .pte")
    return [Path(p) if Path(p).is_absolute() else (Path(env.Dir('#').abspath) / p) for p in ptes]


def _export_model(env):
    """model=<file.py>:<name>: export for the board (etdeploy.export_spec) into build/<board>/export/,
    again only when the model file or the export options changed."""
    from etdeploy.export_spec import ModelSpec, export_for_board
    top = Path(env.Dir("#").abspath)
    spec = ModelSpec.parse(env["model"], top)
    calib = env.get("calibration") or None
    res, program = export_for_board(spec, env["ETD_BOARD"], Path(env["ETD_OUT"].abspath) / "export",
                                    quantize=bool(env.get("quantize")), flow=env.get("flow") or None,
                                    calibration=(top / calib) if calib else None)
    print(f"export: {program} " + ("(exported)" if res else "(up to date)"))
    return program


def bake_program(env):
    """(build unit, bake report) for the board env: etdeploy.buildenv.BuildUnit, the one C build
    description (the minimal image's when no program is given, with report None)."""
    from etdeploy import buildenv, errors
    fail = env["ETD_FAIL"]
    plan = env["ETD_PLAN"]
    try:
        ptes = _programs(env)
    except errors.EtdeployError as e:
        fail(e)
    if not ptes:
        return buildenv.unit(env["ETD_BOARD"], env.get("opt", "2"), sources=[plan.minimal_main]), None
    from etdeploy import bake as et_bake
    opts = {k: env.get(k) for k in ("model_region", "arena_region", "pool_region", "etdump", "atol", "rtol", "inputs", "link",
                                    "ethosu_driver", "run", "runner", "threads")
            if env.get(k) not in (None, "")}
    out = Path(env["ETD_OUT"].abspath) / "gen"
    try:
        res = et_bake.bake(ptes, env["ETD_BOARD"], out, opts)
    except errors.EtdeployError as e:
        fail(e)
    unit = res.build_unit(env.get("opt", "2"))
    # SCons rebuilds the generated C when a program or a generated header changes, too
    unit.depends = list(unit.depends) + list(ptes) + [g for g in res.generated if str(g).endswith(".h")]
    return unit, res.report


def generate(env):
    env.AddMethod(bake_program, "EtBake")
