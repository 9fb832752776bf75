"""Ready for PyPI: the licence ships, the metadata says what PyPI shows, the sdist can test itself.

The wheel and the sdist are built here through hatchling's PEP 517 hooks (the build backend of
``pyproject.toml``), in a subprocess, into a temporary directory.
"""

from __future__ import annotations

import email
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.message import Message
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
REPOSITORY = PROJECT["urls"]["Repository"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    code = (
        "import sys, hatchling.build as b; "
        "print(b.build_sdist(sys.argv[1])); print(b.build_wheel(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    sdist, wheel = done.stdout.split()
    return {"sdist": out / sdist, "wheel": out / wheel}


def wheel_metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


def test_the_mit_licence_is_a_file_and_ships_in_the_wheel_and_the_sdist(
    built: dict[str, Path],
) -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "The above copyright notice and this permission notice shall be included" in text
    with zipfile.ZipFile(built["wheel"]) as archive:
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in archive.namelist())
    with tarfile.open(built["sdist"]) as archive:
        assert "pytest_opdecide-0.1.0/LICENSE" in archive.getnames()
    metadata = wheel_metadata(built["wheel"])
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]


def test_the_metadata_has_urls_and_classifiers(built: dict[str, Path]) -> None:
    metadata = wheel_metadata(built["wheel"])
    classifiers = set(metadata.get_all("Classifier") or [])
    assert {
        "Development Status :: 3 - Alpha",
        "Framework :: Pytest",
        "Topic :: Software Development :: Testing",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
    } <= classifiers
    urls = dict(line.split(", ", 1) for line in metadata.get_all("Project-URL") or [])
    assert set(urls) >= {"Homepage", "Documentation", "Repository", "Issues"}
    assert all(url.startswith("https://") for url in urls.values())
    # No hard dependency on a library that registers a pytest plugin of its own.
    required = [Requirement(r) for r in metadata.get_all("Requires-Dist") or []]
    hard = {r.name for r in required if r.marker is None}
    assert not hard & {"hypothesis", "faker"}


def test_the_sdist_carries_tests_docs_and_no_stray_file(built: dict[str, Path]) -> None:
    with tarfile.open(built["sdist"]) as archive:
        names = [n.split("/", 1)[1] for n in archive.getnames() if "/" in n]
    tops = {n.split("/")[0] for n in names}
    assert tops == {
        # hatchling always ships .gitignore in an sdist (its exclusions apply to builds from it)
        ".gitignore",
        "LICENSE",
        "Makefile",
        "PKG-INFO",
        "README.md",
        "benchmarks",
        "cassettes",
        "docs",
        "examples",
        "fake_runtimes",
        "mkdocs.yml",
        "pyproject.toml",
        "pytest_opdecide",
        "scripts",
        "tests",
    }
    assert "tests/conftest.py" in names
    assert "docs/index.md" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_the_test_extra_lists_each_package_once() -> None:
    listed = [Requirement(text).name for text in PROJECT["optional-dependencies"]["test"]]
    assert sorted(listed) == sorted(set(listed))
    assert {"pytest-httpx", "respx"} <= set(listed)


def test_readme_links_are_absolute_and_lead_to_files_of_the_repository() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert links, "the README links its pages"
    assert [link for link in links if not link.startswith("https://")] == []
    prefix = f"{REPOSITORY}/blob/main/"
    for link in links:
        if link.startswith(prefix):
            assert (ROOT / link.removeprefix(prefix).split("#")[0]).is_file(), link
