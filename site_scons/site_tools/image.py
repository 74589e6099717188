"""SCons tool `image`: the images the board names (bin per load region, Intel hex, uf2), written
by etdeploy.images from the ELF's load segments."""


def exists(env):
    return True


def _targets(env):
    board, out = env["ETD_BOARD"], env["ETD_OUT"]
    return [out.File(f"firmware.{kind}") for kind in board.images]


def images(env, elf):
    import SCons.Script as S
    board = env["ETD_BOARD"]
    if not board.images:
        return []

    return env.Command(_targets(env), elf, S.Action(_build, None if env.get("verbose") else
                                                    "IMG " + ", ".join(f"firmware.{k}" for k in board.images)))


def _build(target, source, env):
    from etdeploy import errors, images as et_images
    board = env["ETD_BOARD"]
    try:
        et_images.write_images(source[0].abspath, board, env["ETD_OUT"].abspath)
    except errors.EtdeployError as e:
        print(f"etdeploy: error: {e}")
        return 1
    return 0


def generate(env):
    env.AddMethod(images, "EtImages")
