"""Where `import ropecheck` comes from and the golden suites it carries (python/README.md "Install").

Under ctest's python_module_test the module is the build folder's (PYTHONPATH=BUILD/python); under
python_installed_package (installed_package.sh, ROPECHECK_EXPECT_INSTALLED=1) it is the one installed
into a fresh virtual environment: the repaired wheel of `pip wheel .`, or `pip install .`; there the
command ROPECHECK_BIN is the environment's `ropecheck` (pyproject.toml [project.scripts]).
"""
import filecmp
import json
import os
import subprocess
import sys

import ropecheck
from conftest import run_cli

REPOSITORY_SUITES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "golden", "suites")
INSTALLED = os.environ.get("ROPECHECK_EXPECT_INSTALLED") == "1"


def test_the_golden_suites_are_the_packages_own_folder():
    package = os.path.dirname(os.path.abspath(ropecheck.__file__))
    assert ropecheck.GOLDEN_DIR == os.path.join(package, "golden")


def test_the_package_carries_every_repository_suite_byte_for_byte():
    expected = sorted(n for n in os.listdir(REPOSITORY_SUITES) if n.endswith(".json"))
    carried = sorted(n for n in os.listdir(ropecheck.GOLDEN_DIR) if n.endswith(".json"))
    assert carried == expected
    match, mismatch, errors = filecmp.cmpfiles(REPOSITORY_SUITES, ropecheck.GOLDEN_DIR, expected, shallow=False)
    assert (mismatch, errors) == ([], [])


def test_the_default_suites_judge_a_function():
    # gate() without suites= reads GOLDEN_DIR: the reference itself passes the f64 groups.
    result = ropecheck.gate(lambda x, positions: ropecheck.apply(x, positions, "layout=half,head_dim=64,base=10000,dtype=f64"),
                            spec="layout=half,head_dim=64,base=10000,dtype=f64")
    assert result.passed, result.summary()
    assert result.groups


def test_the_module_is_where_the_run_expects_it():
    module = os.path.realpath(ropecheck._ropecheck.__file__)
    if INSTALLED:
        # pip's copy in the environment's site-packages: nothing links back to the repository or a build folder.
        assert module.startswith(os.path.realpath(sys.prefix) + os.sep), module
        assert not os.path.islink(ropecheck.GOLDEN_DIR)
        assert os.path.realpath(ropecheck.GOLDEN_DIR).startswith(os.path.realpath(sys.prefix) + os.sep)
    else:
        assert os.path.realpath(ropecheck.GOLDEN_DIR) == os.path.realpath(REPOSITORY_SUITES)


def test_the_commands_default_suites_are_the_ones_beside_it(ropecheck_bin, tmp_path):
    # `ropecheck run` without --golden, from a folder holding no golden/suites: the installed
    # command (the environment's script, which execs the package's ropecheck/bin/ropecheck) judges
    # the package's own suites; the build folder's command, the repository's.
    status, out, err = run_cli(ropecheck_bin, "run", "--impl", "reference", "--json", tmp_path / "run.json", cwd=tmp_path)
    assert status == 0, out + err
    with open(tmp_path / "run.json") as f:
        judged = json.load(f)["golden"]
    expected_dir = ropecheck.GOLDEN_DIR if INSTALLED else REPOSITORY_SUITES
    expected = sorted(os.path.join(os.path.realpath(expected_dir), n) for n in os.listdir(expected_dir) if n.endswith(".json"))
    assert sorted(os.path.realpath(p) for p in judged) == expected
    if INSTALLED:
        assert os.path.realpath(ropecheck_bin) == os.path.join(os.path.realpath(sys.prefix), "bin", "ropecheck")


def test_the_script_without_the_packages_command_says_so_in_one_line(tmp_path):
    # ropecheck/_cli.py where ropecheck/bin/ropecheck is missing (the build folder's package has none).
    missing = tmp_path / "bin" / "ropecheck"
    done = subprocess.run([sys.executable, "-c", f"import sys, ropecheck._cli as cli; cli.COMMAND = {str(missing)!r}; sys.exit(cli.main())"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and str(missing) in done.stderr, done.stderr
