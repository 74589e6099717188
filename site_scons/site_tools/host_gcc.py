"""SCons tool `host_gcc`: the build machine's gcc (board host). Everything it sets comes from toolchains/*.toml through gcc_cross."""


def exists(env):
    return "ETD_PLAN" in env


def generate(env):
    env.Tool("gcc_cross")
