"""SCons tool `xtensa_lx106_elf`: Xtensa lx106 gcc (xtensa-lx106-elf-gcc): call0 ABI, libgcc only. Everything it sets comes from toolchains/*.toml through gcc_cross."""


def exists(env):
    return "ETD_PLAN" in env


def generate(env):
    env.Tool("gcc_cross")
