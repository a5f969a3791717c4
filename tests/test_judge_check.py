"""The judge check in a child process: real generations with SmolLM2, and stand-in children that crash."""

import json
import logging
import sys
from pathlib import Path

import pytest

from localeval.judge.check import (
    JudgeCrashError,
    check_judge,
    check_with_fallback,
    ensure_judge_runs,
)
from localeval.judge.protocol import JudgeConfig

# A stand-in for the check's child: it reports a build, then does what the test says, given the request.
STAND_IN = """
import json, os, signal, sys, time
request = json.loads(sys.argv[-1])
print(json.dumps({"system_info": SYSTEM_INFO}), flush=True)
with open(CALLS, "a") as calls:
    calls.write(json.dumps(request) + "\\n")
BEHAVIOUR
print(json.dumps({"result": {"ok": True, "load_seconds": 0.1, "prompt_tokens": 80, "completion_tokens": 9,
                             "seconds": 0.2, "answer": '{"answer": "North Sea"}'}}), flush=True)
"""
SEGFAULT = "os.kill(os.getpid(), signal.SIGSEGV)"
SEGFAULT_WITH_REPACKING = "if request['weight_repacking']: os.kill(os.getpid(), signal.SIGSEGV)"


def stand_in(tmp_path: Path, behaviour: str, system_info: str = "CPU : AVX2 = 1 | AVX512 = 1") -> list[str]:
    script = tmp_path / "stand_in.py"
    script.write_text(
        STAND_IN.replace("SYSTEM_INFO", repr(system_info))
        .replace("CALLS", repr(str(calls(tmp_path))))
        .replace("BEHAVIOUR", behaviour),
        encoding="utf-8",
    )
    return [sys.executable, str(script)]


def calls(tmp_path: Path) -> Path:
    return tmp_path / "calls.jsonl"


def call_count(tmp_path: Path) -> int:
    return len(calls(tmp_path).read_text().splitlines()) if calls(tmp_path).exists() else 0


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALEVAL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.slow
def test_real_judge_generates_in_a_child_process(smollm_path):
    check = check_judge(smollm_path, JudgeConfig(n_threads=2))
    assert check.ok, check.problem
    assert check.weight_repacking is True
    assert check.prompt_tokens > 50 and 0 < check.completion_tokens <= 24
    assert "answer" in json.loads(check.answer, strict=False)
    assert "CPU :" in check.system_info


@pytest.mark.slow
def test_real_judge_generates_without_repacked_weights(smollm_path):
    check = check_judge(smollm_path, JudgeConfig(n_threads=2, weight_repacking=False))
    assert check.ok, check.problem
    assert check.weight_repacking is False
    assert "answer" in json.loads(check.answer, strict=False)


def test_a_segfault_is_reported_with_what_to_do(tmp_path):
    check = check_judge(Path("/models/judge.gguf"), JudgeConfig(), command=stand_in(tmp_path, SEGFAULT))
    assert not check.ok and check.crashed
    assert check.problem == (
        "llama.cpp crashed while running the judge /models/judge.gguf (SIGSEGV, segmentation "
        "fault): rebuild llama-cpp-python for this machine with scripts/setup.sh, then check "
        "with `localeval doctor`"
    )


def test_a_segfault_in_an_amx_build_names_the_amx_backend(tmp_path):
    command = stand_in(tmp_path, SEGFAULT, system_info="CPU : AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1")
    check = check_judge(Path("judge.gguf"), JudgeConfig(), command=command)
    assert "uses llama.cpp's AMX backend, which crashes on some CPUs (ggml-org/llama.cpp#20824)" in check.problem
    assert "scripts/setup.sh builds without it" in check.problem


def test_an_illegal_instruction_points_to_a_build_for_another_cpu(tmp_path):
    check = check_judge(Path("judge.gguf"), JudgeConfig(), command=stand_in(tmp_path, "os.kill(os.getpid(), 4)"))
    assert "(SIGILL, illegal instruction)" in check.problem
    assert "compiled for CPU instructions this CPU lacks" in check.problem


def test_an_abort_keeps_llama_cpp_last_words(tmp_path):
    behaviour = "sys.stderr.write('GGML_ASSERT(n_tokens > 0) failed\\n'); sys.stderr.flush(); os.abort()"
    check = check_judge(Path("judge.gguf"), JudgeConfig(), command=stand_in(tmp_path, behaviour))
    assert "(SIGABRT, aborted)" in check.problem
    assert check.problem.endswith("Its last words: GGML_ASSERT(n_tokens > 0) failed")


def test_an_error_the_child_reports_is_not_a_crash(tmp_path):
    behaviour = "print(json.dumps({'result': {'ok': False, 'error': 'judge.gguf has no chat template'}})); sys.exit(2)"
    check = check_judge(Path("judge.gguf"), JudgeConfig(), command=stand_in(tmp_path, behaviour))
    assert not check.ok and not check.crashed
    assert check.problem == "the judge check on judge.gguf failed: judge.gguf has no chat template"


def test_a_hung_check_times_out(tmp_path):
    check = check_judge(Path("judge.gguf"), JudgeConfig(), command=stand_in(tmp_path, "time.sleep(30)"), timeout=1)
    assert not check.ok
    assert check.problem.startswith("the judge check on judge.gguf did not finish in 1 s")


def test_a_crash_with_repacked_weights_is_tried_again_without(tmp_path):
    attempts = check_with_fallback(Path("judge.gguf"), JudgeConfig(), stand_in(tmp_path, SEGFAULT_WITH_REPACKING))
    assert [(a.ok, a.weight_repacking) for a in attempts] == [(False, True), (True, False)]


def test_evaluate_falls_back_loudly_and_remembers_it(tmp_path, caplog):
    command = stand_in(tmp_path, SEGFAULT_WITH_REPACKING)
    for _ in range(2):
        with caplog.at_level(logging.WARNING, logger="localeval"):
            config = ensure_judge_runs(Path("judge.gguf"), "ab" * 32, JudgeConfig(), command=command)
        assert config.weight_repacking is False
        assert "llama.cpp crashed while running the judge judge.gguf (SIGSEGV" in caplog.text
        assert "runs without llama.cpp's repacked weights instead, which is slower" in caplog.text
        caplog.clear()
    assert call_count(tmp_path) == 2  # the second run trusted the remembered result


def test_a_remembered_pass_is_rechecked_when_asked(tmp_path):
    command = stand_in(tmp_path, "")
    ensure_judge_runs(Path("judge.gguf"), "cd" * 32, JudgeConfig(), command=command)
    ensure_judge_runs(Path("judge.gguf"), "cd" * 32, JudgeConfig(), command=command)
    assert call_count(tmp_path) == 1
    ensure_judge_runs(Path("judge.gguf"), "cd" * 32, JudgeConfig(), trust_remembered=False, command=command)
    assert call_count(tmp_path) == 2


def test_evaluate_refuses_a_judge_that_crashes_either_way(tmp_path):
    with pytest.raises(JudgeCrashError) as raised:
        ensure_judge_runs(Path("judge.gguf"), "ef" * 32, JudgeConfig(), command=stand_in(tmp_path, SEGFAULT))
    message = str(raised.value)
    assert message.startswith("llama.cpp crashed while running the judge judge.gguf (SIGSEGV, segmentation fault)")
    assert "Without repacked weights it failed too: llama.cpp crashed" in message


def test_a_crash_only_beside_the_runs_libraries_is_told_apart(tmp_path):
    command = stand_in(tmp_path, "if not request['alone']: os.kill(os.getpid(), signal.SIGSEGV)")
    attempts = check_with_fallback(Path("judge.gguf"), JudgeConfig(), command)
    assert [(a.ok, a.weight_repacking) for a in attempts] == [(False, True), (False, False), (False, True)]
    requests = [json.loads(line) for line in calls(tmp_path).read_text().splitlines()]
    assert [r["alone"] for r in requests] == [False, False, True]
    with pytest.raises(JudgeCrashError) as raised:
        ensure_judge_runs(Path("judge.gguf"), "12" * 32, JudgeConfig(), command=command)
    message = str(raised.value)
    assert "llama.cpp runs the judge judge.gguf alone, but crashes in a process that has also loaded" in message
    assert "different C++ runtimes (libstdc++)" in message and "LD_PRELOAD=$(ldd " in message


def test_a_crash_when_torch_joins_names_that_moment(tmp_path):
    behaviour = "print(json.dumps({'stage': 'when torch was loaded after the judge had run'}), flush=True)\n" + SEGFAULT
    check = check_judge(Path("judge.gguf"), JudgeConfig(), command=stand_in(tmp_path, behaviour))
    assert check.crashed
    assert check.problem.startswith(
        "llama.cpp crashed while running the judge judge.gguf (SIGSEGV, segmentation "
        "fault, when torch was loaded after the judge had run)"
    )
    assert "different C++ runtimes" in check.problem
