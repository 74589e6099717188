"""SCons tool `report`: build/<board>/report.json and a printed summary of used/free bytes per
memory region, placed model/arena/pool symbols and kernels, read back from the ELF
(etdeploy.elfreport). The bake report (programs, plan fit) is merged in when there is one."""
import json
from pathlib import Path


def exists(env):
    return True


def report(env, elf, bake_report=None):
    import SCons.Script as S
    board, out = env["ETD_BOARD"], env["ETD_OUT"]
    target = out.File("report.json")
    bake_json = json.dumps(bake_report or {}, sort_keys=True, default=str)

    node = env.Command(target, [elf, env.Value(bake_json)], S.Action(_build, None if env.get("verbose") else "REPORT $TARGET"))
    return node


def _build(target, source, env):
    from etdeploy import elfreport, errors, stack_budget
    board, out = env["ETD_BOARD"], env["ETD_OUT"]
    bake_report = json.loads(source[1].read())
    rep = elfreport.report(source[0].abspath, board, out.File("firmware.map").abspath)
    if env["ETD_PLAN"].linker_script and board.placement is not None:   # bare metal: the stack must hold
        try:
            stack = stack_budget.compute([o.abspath for o in source[0].sources],
                                         stack_budget.EXC_FRAME if board.family == "cortex-m" else 0)
            stack["size"] = board.placement.stack_size
            rep["stack"] = stack
            stack_budget.check(stack, board)
        except errors.EtdeployError as e:
            print(f"etdeploy: error: {e}")
            for kind in board.images:            # an earlier build's images must not be flashed either
                for img in Path(out.abspath).glob(f"firmware*.{kind}"):
                    img.unlink()
            return 1
    if bake_report:
        rep["bake"] = bake_report
    with open(target[0].abspath, "w") as f:
        json.dump(rep, f, indent=1, default=str)
        f.write("\n")
    print(elfreport.summary(rep))
    return 0


def generate(env):
    env.AddMethod(report, "EtReport")
