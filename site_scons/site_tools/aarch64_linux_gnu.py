"""SCons tool `aarch64_linux_gnu`: AArch64 Linux gcc, or the Android NDK's clang (static binaries). Everything it sets comes from toolchains/*.toml through gcc_cross."""


def exists(env):
    return "ETD_PLAN" in env


def generate(env):
    env.Tool("gcc_cross")
