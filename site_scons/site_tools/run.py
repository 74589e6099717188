"""SCons tool `run`: run=1 runs the built image through etdeploy.session.run (runner, link and
harness) and prints the result with etdeploy.report. The minimal image (no pte=) is only checked
for its hello line and exit status 0, through the same runner classes."""


def exists(env):
    return True


def run(env, elf, after=(), minimal=False):
    import SCons.Script as S
    board, out = env["ETD_BOARD"], env["ETD_OUT"]

    def do_run(target, source, env):
        from pathlib import Path

        from etdeploy import errors, proc, report, runners, session
        timeout = float(env.get("timeout") or 60)
        try:
            if minimal:
                argv = runners.runner_for(board, log=print, prefer=env.get("runner") or None).command(
                    source[0].abspath, port=0)
                # The hello line is plain text: take the UART on stdout instead of the link socket.
                argv = ["stdio" if a.startswith("tcp:") else a for a in argv]
                res = proc.run(argv, check=False, timeout=timeout, log=print)
                print(res.stdout, end="")
                ok = res.returncode == 0 and f"etdeploy: {board.name} ok" in res.stdout
                print(f"run: exit status {res.returncode}, " + ("hello line seen" if ok else "NO hello line"))
                return 0 if ok else 1
            res = session.run(board, source[0].abspath, out.Dir("run").abspath, timeout=timeout,
                              runner=env.get("runner") or None, icount=bool(env.get("icount")))
            report.print_result(res, Path(out.Dir("run").abspath))
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
