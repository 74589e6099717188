"""SCons tool `bake`: turns pte= (or model=) into generated C + the runtime/kernel sources via
etdeploy.bake.bake (see CONTRACT.md), or, with no program, the minimal image
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
    """(sources, defines, include_dirs, depends, report) for the board env."""
    from etdeploy import errors
    fail = env["ETD_FAIL"]
    plan = env["ETD_PLAN"]
    try:
        ptes = _programs(env)
    except errors.EtdeployError as e:
        fail(e)
    if not ptes:
        return [plan.minimal_main], {}, [], [], None
    try:
        from etdeploy import bake as et_bake
    except ImportError as e:   # the bake step is the lead's module; guard until it exists
        fail(errors.BakeError(f"pte= needs etdeploy.bake, which is not importable here ({e})"))
    opts = {k: env.get(k) for k in ("arena_region", "etdump", "atol", "rtol", "inputs", "link", "ethosu_driver", "run", "runner")
            if env.get(k) not in (None, "")}
    out = Path(env["ETD_OUT"].abspath) / "gen"
    try:
        res = et_bake.bake(ptes, env["ETD_BOARD"], out, opts)
    except errors.EtdeployError as e:
        fail(e)
    gen_c = [g for g in res.generated if str(g).endswith(".c")]
    return (list(res.sources) + gen_c, dict(res.defines), list(res.include_dirs),
            list(res.depends) + list(ptes) + [g for g in res.generated if str(g).endswith(".h")], res.report)


def generate(env):
    env.AddMethod(bake_program, "EtBake")
