"""Device-farm jobs on LAVA (issue 17), run by the real dispatcher of the Debian lava-dispatcher
package: jobs written from board data pass LAVA's own schema and pass under `lava-run`; faulting
and hanging firmware fail with their class; a broken job is refused before it runs; a job's log
becomes the same result.json and exit code as a local run; `lava submit` talks XML-RPC to a
(fake, 127.0.0.1) LAVA server."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from xmlrpc.server import SimpleXMLRPCRequestHandler, SimpleXMLRPCServer

import numpy as np
import pytest
import yaml

from conftest import need_tool
from support import boardrun, custom_main

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "lava" / os.environ.get("PYTEST_XDIST_WORKER", "main")
BPTE = ROOT / "tests" / "models" / "add.bpte"
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "tools"))


def etd(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "lava", *map(str, args)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def need_dispatcher():
    need_tool("lava-run", "lava-dispatcher")
    need_tool("qemu-system-arm", "qemu-system-arm")
    need_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
    if os.geteuid() != 0:
        pytest.skip("lava-run runs only as root")


def log_entries(out: Path) -> list[dict]:
    """LAVA's log: one '- {...}' entry a line (JSON, but for the odd YAML tag: parse as YAML)."""
    return yaml.safe_load((out / "output.yaml").read_text()) or []


def lava_verdict(out: Path) -> tuple[str, dict]:
    job, cases = None, {}
    for e in log_entries(out):
        m = e["msg"]
        if e["lvl"] == "results":
            if m["definition"] == "lava" and m["case"] == "job":
                job = m["result"]
            elif m["definition"] != "lava":
                cases[m["case"]] = m["result"]
    return job, cases


@pytest.fixture(scope="module")
def jobs():
    """The add.bpte job for corstone300 and mps2-an386, written (and built with link=text) by etdeploy."""
    need_dispatcher()
    out = CACHE / "jobs"
    shutil.rmtree(out, ignore_errors=True)
    p = etd("--board", "corstone300,mps2-an386", "--pte", BPTE, "-o", out, "--timeout", 20)
    assert p.returncode == 0, p.stdout + p.stderr
    paths = {b: out / f"etdeploy-{b}-add.yaml" for b in ("corstone300", "mps2-an386")}
    assert all(p.exists() for p in paths.values()), p.stdout
    return paths


@pytest.fixture(scope="module")
def passed(jobs):
    """Both jobs run by lava-run: {board: output dir}."""
    p = etd("run", *jobs.values())
    assert p.returncode == 0, p.stdout + p.stderr
    return {b: j.with_suffix("") for b, j in jobs.items()}


@pytest.fixture(scope="module")
def bad_images():
    """mps2-an386 images that crash / hang after their hello: text link, and binary for a local run."""
    need_dispatcher()
    return custom_main.build("mps2-an386", CACHE / "bad", custom_main.CRASH_OR_HANG_MAIN,
                             {"crash_text": ["-DTEST_CRASH", "-DET_LINK_TEXT"], "hang_text": ["-DET_LINK_TEXT"],
                              "crash": ["-DTEST_CRASH"]})


@pytest.mark.build
@pytest.mark.emu
def test_jobs_carry_the_board_data(jobs):
    c3 = yaml.safe_load(jobs["corstone300"].read_text())
    assert c3["device_type"] == "qemu" and c3["context"]["machine"] == "mps3-an547" and c3["context"]["arch"] == "arm"
    deploy, boot, test = (a[k] for a, k in zip(c3["actions"], ("deploy", "boot", "test")))
    assert deploy["images"]["kernel"]["image_arg"] == "-kernel {kernel}"
    assert deploy["images"]["kernel"]["url"].endswith("/corstone300/firmware.elf")
    assert boot["method"] == "qemu" and test["timeout"] == {"seconds": 20}
    assert "-semihosting-config" in c3["context"]["extra_options"]
    mon = test["monitors"][0]
    # The verdict needs the firmware's CRC-carrying result line: never silence, never a crash's output.
    assert mon["pattern"].startswith("(?P<test_case_id>ET-RESULT) (?P<result>pass|fail)") and "crc=" in mon["pattern"]
    assert yaml.safe_load(jobs["mps2-an386"].read_text())["context"]["machine"] == "mps2-an386"


@pytest.mark.build
@pytest.mark.emu
def test_generated_jobs_pass_under_lava_run(passed):
    for board, out in passed.items():
        job, cases = lava_verdict(out)
        assert (job, cases) == ("pass", {"et_result": "pass"}), (board, job, cases)
        doc = json.loads((out / "result.json").read_text())
        assert doc["status"] == "pass" and doc["board"] == board
        assert doc["result"]["cases"] == 3 and doc["result"]["cases_failed"] == 0
        assert len(doc["cases"]) == 3 and all(c["passed"] for c in doc["cases"])
        assert doc["link"] == {"frames": 9, "bad_frames": 0, "lost_frames": 0}
        assert [m["name"] for m in doc["methods"]] == ["forward"] and doc["methods"][0]["exec_cycles"] > 0


@pytest.mark.build
@pytest.mark.emu
def test_lava_results_match_a_local_run_of_the_same_program(passed, tmp_path):
    local = boardrun.build_and_run("mps2-an386", BPTE)
    assert local["_rc"] == 0 and local["status"] == "pass", local["_stderr"][-2000:]
    p = etd("results", passed["mps2-an386"], "--run-dir", tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    farm = json.loads((tmp_path / "result.json").read_text())
    assert farm["cases"] == local["cases"]
    assert [(o["case"], o["index"], o["shape"]) for o in farm["outputs"]] == \
           [(o["case"], o["index"], o["shape"]) for o in local["outputs"]]
    for o, want in zip(farm["outputs"], local["arrays"]):
        got = np.load(tmp_path / o["file"]) if "file" in o else np.asarray(o["values"])
        np.testing.assert_array_equal(got, want)


@pytest.mark.build
@pytest.mark.emu
@pytest.mark.parametrize("kind, code, lava_says", [("crash", 12, "Connection closed"),
                                                   ("hang", 11, "timed out")])
def test_faulting_and_hanging_firmware_fail_with_their_class(bad_images, tmp_path, kind, code, lava_says):
    p = etd("--board", "mps2-an386", "--elf", bad_images[f"{kind}_text"], "-o", tmp_path, "--timeout", 4)
    assert p.returncode == 0, p.stdout + p.stderr
    job = Path(p.stdout.split()[-1])
    r = etd("run", job, timeout=180)
    assert r.returncode == code, r.stdout + r.stderr
    out = job.with_suffix("")
    doc = json.loads((out / "result.json").read_text())
    assert doc["status"] == "error"
    text = json.dumps(log_entries(out))
    assert lava_says in text
    _, cases = lava_verdict(out)
    assert cases.get("et_result") != "pass"
    if kind == "crash":
        assert doc["fault"] and "et_test_crash_here" in doc["reason"] and "et_test_crash_here" in r.stdout + r.stderr
        # The same image with the binary link, run here: the same exit code.
        local = subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "run", "--board", "mps2-an386", "--elf",
                                str(bad_images["crash"]), "--timeout", "20", "--run-dir", str(tmp_path / "local")],
                               cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
        assert local.returncode == code, local.stdout + local.stderr
    else:
        assert "timeout" in doc["reason"]


@pytest.mark.build
@pytest.mark.emu
def test_a_broken_job_is_refused_by_lavas_schema_before_it_runs(jobs, tmp_path):
    job = yaml.safe_load(jobs["mps2-an386"].read_text())
    job["actions"][2]["test"]["monitors"][0].pop("end")
    job["timeouts"]["job"] = {"seconds": 0}
    bad = tmp_path / "broken.yaml"
    bad.write_text(yaml.safe_dump(job))
    p = etd("validate", bad)
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and "LAVA refuses" in err and "broken.yaml" in err, err
    r = etd("run", bad)
    assert r.returncode == 2 and not (tmp_path / "broken").exists(), r.stdout + r.stderr
    assert etd("validate", jobs["mps2-an386"]).returncode == 0


@pytest.mark.build
@pytest.mark.emu
@pytest.mark.parametrize("edit, why", [
    # The verdict line said fail -> pass with its old CRC: LAVA's matcher would count a pass.
    (lambda s: s.replace("ET-RESULT pass status=0 cases=3 failed=0", "ET-RESULT pass status=0 cases=3 failed=1"),
     "fails its CRC"),
    # One hex digit of an output frame changed.
    (lambda s: re.sub(r"(ETL:0303)([0-9a-f])", lambda m: m[1] + ("1" if m[2] != "1" else "2"), s, count=1),
     "link errors"),
    # The frames are gone, the verdict line stays: no pass from a line alone.
    (lambda s: "\n".join(l for l in s.splitlines() if "ETL:" not in l) + "\n", "without a result record"),
])
def test_a_corrupted_log_is_refused(passed, tmp_path, edit, why):
    out = tmp_path / "job"
    shutil.copytree(passed["mps2-an386"], out, ignore=shutil.ignore_patterns("lava-run", "*.npy"))
    before = (out / "output.yaml").read_text()
    after = edit(before)
    assert after != before
    (out / "output.yaml").write_text(after)
    p = etd("results", out)
    assert p.returncode in (10, 16) and why in p.stdout + p.stderr, p.stdout + p.stderr
    assert json.loads((out / "result.json").read_text())["status"] == "error"


class _Recording(SimpleXMLRPCRequestHandler):
    auth: list = []

    def decode_request_content(self, data):
        type(self).auth.append(self.headers.get("Authorization"))
        return super().decode_request_content(data)

    def log_message(self, *a):
        pass


def fake_lava(log_text: str):
    """A LAVA scheduler API on 127.0.0.1 with one job that finishes with log_text."""
    srv = SimpleXMLRPCServer(("127.0.0.1", 0), requestHandler=_Recording, logRequests=False, allow_none=True)
    state = {"submitted": [], "shows": 0}

    def submit(definition):
        state["submitted"].append(definition)
        return 4242

    def show(job_id):
        state["shows"] += 1
        return {"id": job_id, "state": "Running" if state["shows"] < 2 else "Finished",
                "health": "Unknown" if state["shows"] < 2 else "Complete"}

    def logs(job_id, line):
        lines = log_text.splitlines(keepends=True)[line:]
        return True, "".join(lines)
    srv.register_function(submit, "scheduler.jobs.submit")
    srv.register_function(show, "scheduler.jobs.show")
    srv.register_function(logs, "scheduler.jobs.logs")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, state


@pytest.mark.build
@pytest.mark.emu
def test_submit_sends_the_job_over_xmlrpc_waits_and_judges_the_log(passed, jobs, tmp_path):
    srv, state = fake_lava((passed["mps2-an386"] / "output.yaml").read_text())
    _Recording.auth.clear()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        env = dict(ENV, LAVA_URL=url, LAVA_USER="ci", LAVA_TOKEN="s3cret")
        p = subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "lava", "submit", str(jobs["mps2-an386"]),
                            "--poll", "0.1", "-o", str(tmp_path / "farm")], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
    finally:
        srv.shutdown()
        srv.server_close()
    assert p.returncode == 0, p.stdout + p.stderr
    assert state["submitted"] == [jobs["mps2-an386"].read_text()] and state["shows"] >= 2
    assert f"Basic {base64.b64encode(b'ci:s3cret').decode()}" in _Recording.auth
    doc = json.loads((tmp_path / "farm" / "result.json").read_text())
    assert doc["status"] == "pass" and doc["result"]["cases"] == 3


@pytest.mark.unit
def test_bad_input_gets_one_line_and_nothing_written(tmp_path):
    for args, code, what in [(("--board", "nosuch", "--elf", "x.elf"), 2, "unknown board"),
                             (("--board", "host", "--elf", "x.elf"), 2, "no farm method"),
                             (("submit", "x.yaml"), 22, "LAVA_URL")]:
        env = {k: v for k, v in ENV.items() if not k.startswith("LAVA_")}
        p = subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "lava", *args, "-o", str(tmp_path / "o")]
                           if args[0] != "submit" else
                           [sys.executable, "-m", "etdeploy.cli.main", "lava", *args], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == code and what in p.stderr and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
        assert not (tmp_path / "o").exists()


class _Refusing(SimpleXMLRPCRequestHandler):
    def do_POST(self):
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


@pytest.mark.unit
def test_a_refused_token_is_a_one_line_error(tmp_path):
    srv = SimpleXMLRPCServer(("127.0.0.1", 0), requestHandler=_Refusing, logRequests=False)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    job = tmp_path / "j.yaml"
    job.write_text("job_name: x\n")
    try:
        from etdeploy.lava import FarmUnreachable, server
        farm = server.Farm(f"http://127.0.0.1:{srv.server_address[1]}", "ci", "wrong", timeout=5)
        with pytest.raises(FarmUnreachable, match="answered 401"):
            farm.submit(job.read_text())
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.unit
def test_an_unreachable_farm_is_a_typed_error(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]      # closed again: nothing listens there
    job = tmp_path / "j.yaml"
    job.write_text("job_name: x\n")
    from etdeploy.lava import FarmUnreachable, server
    farm = server.Farm(f"http://127.0.0.1:{port}", "u", "t", timeout=5)
    with pytest.raises(FarmUnreachable, match="cannot reach LAVA"):
        farm.submit(job.read_text())


@pytest.mark.build
@pytest.mark.parametrize("board, method", [("corstone300", "fvp"), ("corstone300", "mps3"), ("corstone320", "fvp"),
                                           ("pico2", "uf2"), ("mps2-an386", "pyocd")])
def test_farm_methods_without_an_emulator_here_validate(tmp_path, board, method):
    """Hardware and FVP jobs cannot run on this machine; they are written from the board data and must
    pass LAVA's schema (lava-run's --validate would need the device itself)."""
    need_tool("lava-run", "lava-dispatcher")
    from etdeploy import config, flash
    from etdeploy.lava import dispatcher, jobs as lava_jobs
    b = config.load_board(board)
    elf = tmp_path / "img" / "firmware.elf"
    elf.parent.mkdir()
    for suffix in (".elf", ".bin", ".hex", ".uf2"):
        elf.with_suffix(suffix).write_bytes(b"\0")
    job, side = lava_jobs.build(b, elf, "add", 30, tmp_path / "out", method=method)
    path = lava_jobs.write(job, side, tmp_path / "out")
    dispatcher.validate([path])
    deploy, boot, test = (a[k] for a, k in zip(job["actions"], ("deploy", "boot", "test")))
    assert test["monitors"][0]["pattern"] == lava_jobs.VERDICT_RE and test["timeout"] == {"seconds": 30}
    if method == "fvp":
        assert boot["image"].endswith(b.fvp.binary) and "{TEST_BINARY}" in boot["arguments"]
        assert f"{b.fvp.board_prefix}.uart0.shutdown_on_eot=1" in boot["arguments"]
        assert deploy["images"]["test_binary"]["url"] == elf.resolve().as_uri()
    elif method == "mps3":
        assert deploy["to"] == "mps" and boot["method"] == "minimal"
        txt = deploy["images"]["test_binary_2"]
        assert txt["rename"] == b.flash.images_txt
        assert Path(txt["url"][len("file://"):]).read_text() == flash.mps3_images_txt(b.flash)
        assert deploy["images"]["test_binary_1"]["rename"] == "SOFTWARE/etdeploy.bin"
    elif method == "uf2":
        assert deploy["images"]["test_binary_1"]["url"].endswith("firmware.uf2") and boot["method"] == "minimal"
    else:
        assert boot["method"] == "pyocd" and deploy["images"]["binary"]["url"].endswith("firmware.hex")


def _profile(etdp: Path) -> list[tuple[str, int]]:
    from etdeploy import fbs
    root = fbs.Reader(fbs.etdump_schema(), etdp.read_bytes()[4:]).root()
    return [(e["profile_event"]["name"], e["profile_event"]["instruction_id"])
            for r in root["run_data"] for e in r["events"] if e.get("profile_event")]


@pytest.mark.build
@pytest.mark.emu
def test_a_profiled_job_gives_the_same_etdump_as_a_local_run(tmp_path):
    need_dispatcher()
    mlp = ROOT / "tests" / "models" / "mlp.pte"
    p = etd("--board", "mps2-an386", "--pte", mlp, "--etdump", "1", "-o", tmp_path, "--timeout", 30)
    assert p.returncode == 0, p.stdout + p.stderr
    r = etd("run", tmp_path / "etdeploy-mps2-an386-mlp.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / "etdeploy-mps2-an386-mlp"
    farm = json.loads((out / "result.json").read_text())
    # The same image run here (the decoder reads the text link too): the same events and outputs.
    elf = yaml.safe_load((tmp_path / "etdeploy-mps2-an386-mlp.yaml").read_text())["metadata"]["etdeploy.image"]
    here = subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "run", "--board", "mps2-an386", "--elf", elf,
                           "--run-dir", str(tmp_path / "here")], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert here.returncode == 0, here.stdout + here.stderr
    local = json.loads((tmp_path / "here" / "result.json").read_text())
    assert farm["etdump"]["complete"] == 1 and farm["etdump"]["events"] == local["etdump"]["events"]
    events = _profile(out / "etdump.etdp")
    assert events == _profile(tmp_path / "here" / "etdump.etdp")
    assert events[-1][0] == "Method::execute" and events[0][0].startswith("native_call_")
    assert farm["outputs"][0]["shape"] == local["outputs"][0]["shape"]
    np.testing.assert_array_equal(np.load(out / farm["outputs"][0]["file"]) if "file" in farm["outputs"][0]
                                  else np.asarray(farm["outputs"][0]["values"]),
                                  np.load(tmp_path / "here" / local["outputs"][0]["file"])
                                  if "file" in local["outputs"][0] else np.asarray(local["outputs"][0]["values"]))


@pytest.mark.unit
def test_the_text_link_carries_the_same_checked_frames():
    from etdeploy import link
    enc = link.Encoder()
    frames = [enc.frame(link.LOG, b"hello"), enc.frame(link.RESULT, bytes(20))]
    text = b"".join(b"ETL:" + f[:-1].hex().encode() + b"\n" for f in frames)
    dec = link.Decoder()
    recs = [r for i in range(0, len(text), 7) for r in dec.feed(text[i:i + 7])]   # in odd-sized pieces
    assert [(r.type, r.payload) for r in recs] == [(link.LOG, b"hello"), (link.RESULT, bytes(20))]
    assert dec.text and dec.stats.bad_frames == 0
    bad = link.Decoder()
    flipped = text.replace(b"ETL:" + frames[0][:2].hex().encode(), b"ETL:" + bytes([frames[0][0], frames[0][1] ^ 1]).hex().encode())
    assert flipped != text
    recs = bad.feed(flipped + b"ETL:zz\nETL:0102")
    bad.finish()
    assert [r.type for r in recs] == [link.RESULT] and bad.stats.bad_frames == 3


@pytest.mark.build
@pytest.mark.emu
def test_a_text_image_also_runs_here(jobs, tmp_path):
    """The image a farm job runs passes `etdeploy run` here too (the decoder reads either link)."""
    elf = yaml.safe_load(jobs["mps2-an386"].read_text())["metadata"]["etdeploy.image"]
    p = subprocess.run([sys.executable, "-m", "etdeploy.cli.main", "run", "--board", "mps2-an386", "--elf", elf,
                        "--run-dir", str(tmp_path)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads((tmp_path / "result.json").read_text())
    assert doc["status"] == "pass" and doc["link"]["frames"] == 9 and len(doc["cases"]) == 3
