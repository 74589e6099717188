"""SCons tool `arm_none_eabi`: GNU Arm Embedded (arm-none-eabi-gcc): Cortex-M boards. Everything it sets comes from toolchains/*.toml through gcc_cross."""


def exists(env):
    return "ETD_PLAN" in env


def generate(env):
    env.Tool("gcc_cross")
