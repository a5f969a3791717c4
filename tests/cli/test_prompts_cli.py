"""`localeval prompts list|show|export`."""

from pathlib import Path

from click.testing import CliRunner

from localeval._resources import bundled_prompts_dir
from localeval.cli import main
from localeval.steps import STEPS
from localeval.steps.prompts import LANGUAGES


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_list_names_every_step_file_and_hash():
    result = run("prompts", "list")
    assert result.exit_code == 0
    lines = [line for line in result.output.splitlines() if not line.startswith(" ")]
    assert [line.split()[:2] for line in lines] == [[step, lang] for step in sorted(STEPS) for lang in LANGUAGES]


def test_show_prints_the_file_with_its_path_and_hash():
    result = run("prompts", "show", "statements")
    assert result.exit_code == 0
    path = bundled_prompts_dir() / "en" / "statements.toml"
    assert result.output.startswith(f"# {path} (sha256 ")
    assert result.output.endswith(path.read_text(encoding="utf-8"))


def test_show_unknown_step_is_an_error():
    result = run("prompts", "show", "nonsense")
    assert result.exit_code == 1
    assert result.output == f"Error: Unknown step 'nonsense'. Known steps: {', '.join(sorted(STEPS))}.\n"


def test_export_then_override_one_file(tmp_path: Path):
    result = run("prompts", "export", str(tmp_path / "mine"))
    assert result.exit_code == 0
    files = len(STEPS) * len(LANGUAGES) + len(LANGUAGES)  # every step's prompt, and criteria.toml, per language
    assert result.output == f"Wrote {files} prompt files to {tmp_path / 'mine'}/\n"
    edited = tmp_path / "mine" / "en" / "statements.toml"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    (tmp_path / "mine" / "en" / "statement_support.toml").unlink()
    listing = run("prompts", "list", "--prompts", str(tmp_path / "mine"))
    assert f"{edited} (override)" in listing.output
    assert str(bundled_prompts_dir() / "en" / "statement_support.toml") in listing.output


def test_export_refuses_to_overwrite(tmp_path: Path):
    assert run("prompts", "export", str(tmp_path)).exit_code == 0
    result = run("prompts", "export", str(tmp_path))
    assert result.exit_code == 1
    assert "already exists; export into an empty folder." in result.output
