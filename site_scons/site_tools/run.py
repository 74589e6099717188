"""SCons tool `run`: run=1 runs the built image through etdeploy.runners.run (the lead's runner,
link and harness; guarded until it exists). The minimal image (no pte=) is only checked for its
hello line and exit status 0, through the same runner classes."""


def exists(env):
    return True


def run(env, elf, after=(), minimal=False):
    import SCons.Script as S
    board, out = env["ETD_BOARD"], env["ETD_OUT"]

    def do_run(target, source, env):
        from etdeploy import errors
        try:
            from etdeploy import runners
        except ImportError as e:
            print(f"etdeploy: error: run=1 needs etdeploy.runners, which is not importable ({e})")
            return 1
        timeout = float(env.get("timeout") or 60)
        try:
            if minimal:
                from etdeploy import proc
                argv = runners.runner_for(board, log=print, prefer=env.get("runner") or None).command(
                    source[0].abspath, port=0)
                # The hello line is plain text: take the UART on stdout instead of the link socket.
                argv = ["stdio" if a.startswith("tcp:") else a for a in argv]
                res = proc.run(argv, check=False, timeout=timeout, log=print)
                print(res.stdout, end="")
                ok = res.returncode == 0 and f"etdeploy: {board.name} ok" in res.stdout
                print(f"run: exit status {res.returncode}, " + ("hello line seen" if ok else "NO hello line"))
                return 0 if ok else 1
            res = runners.run(board, source[0].abspath, out.Dir("run").abspath, timeout=timeout,
                              runner=env.get("runner") or None, icount=bool(env.get("icount")))
            try:
                from etdeploy.cli.run import print_result
                print_result(res, __import__("pathlib").Path(out.Dir("run").abspath))
            except (ImportError, AttributeError):
                print(f"run: {getattr(res, 'status', 'done')}")
            return 0
        except errors.EtdeployError as e:
            print(f"etdeploy: error: {e}")
            return getattr(e, "exit_code", 1)
    node = env.Command(out.File("run.stamp"), elf, S.Action(do_run, "RUN $SOURCE"))
    env.Depends(node, list(after))
    env.AlwaysBuild(node)
    return node


def generate(env):
    env.AddMethod(run, "EtRun")
