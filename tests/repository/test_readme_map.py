"""The README is a map first (issue 47): its quick start, then its layout, which names every module
at the top of each package and every subpackage (a subpackage's modules are a group its line
describes), then the use; the runtime's semantics and limitations live in runtime/README.md."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
PACKAGES = (ROOT / "runtime" / "cudacheck", ROOT / "course" / "tiling_course")


def sections(text):
    return [m.group(1) for m in re.finditer(r"^## (.+)$", text, re.M)]


def layout(text):
    return text[text.index("## Layout"):text.index("\n## ", text.index("## Layout") + 1)]


def unnamed(text, packages=PACKAGES):
    """Each top-level module (file.py) and subpackage (folder/) of the packages that the layout does not name."""
    block, missing = layout(text), []
    for package in packages:
        for path in sorted(package.iterdir()):
            if path.suffix == ".py" and path.stem != "__init__":
                if not re.search(rf"(?<![\w/]){re.escape(path.stem)}(\.py)?\b", block):
                    missing.append(path.relative_to(package.parent).as_posix())
            elif path.is_dir() and (path / "__init__.py").is_file() and f"{path.name}/" not in block:
                missing.append(path.relative_to(package.parent).as_posix() + "/")
    return missing


def test_the_readme_is_quick_start_then_layout_then_use():
    text = (ROOT / "README.md").read_text()
    assert sections(text)[:3] == ["Quick start", "Layout", "Using the runtime"], sections(text)
    runtime = (ROOT / "runtime" / "README.md").read_text()
    for part in ("How the CPU runtime works", "How far to trust checked mode", "Limitations"):
        assert part in sections(runtime), part
        assert f"## {part}" not in text          # one home for each
    assert "`runtime/README.md`" in text


def test_the_layout_names_every_module_and_subpackage():
    assert unnamed((ROOT / "README.md").read_text()) == []


def test_a_module_the_layout_does_not_name_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "named.py", "forgotten.py", "sub/__init__.py"):
        (package / name).write_text("")
    readme = "## Layout\n```\npkg/ named.py the one we name\n```\n## Using the runtime\n"
    missing = unnamed(readme, packages=(package,))
    assert [Path(m).name for m in missing] == ["forgotten.py", "sub"]
