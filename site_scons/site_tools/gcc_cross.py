"""SCons tool `gcc_cross`: a gcc-style (cross) compiler from the board's toolchain data
(etdeploy.buildenv.BuildPlan): the compiler path found on PATH or under the toolchain's env var,
and its binutils by prefix. The per-family tools (arm_none_eabi, xtensa_lx106_elf,
aarch64_linux_gnu, host_gcc) use it."""


def exists(env):
    return "ETD_PLAN" in env


def generate(env):
    plan = env["ETD_PLAN"]
    for t in ("gcc", "gnulink", "as"):
        env.Tool(t)
    env["CC"] = str(plan.compiler)
    env["LINK"] = "$CC"
    env["AS"] = "$CC"
    env["ASPPFLAGS"] = "$CCFLAGS"
    env["OBJCOPY"] = plan.tools["objcopy"]
    env["OBJSUFFIX"] = ".o"
    env["PROGSUFFIX"] = ".elf" if plan.linker_script else ""
