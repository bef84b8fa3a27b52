"""Where `import ropecheck` comes from and the golden suites it carries (python/README.md "Install").

Under ctest's python_module_test the module is the build folder's (PYTHONPATH=BUILD/python); under
python_installed_package (installed_package.sh, ROPECHECK_EXPECT_INSTALLED=1) it is the one
`pip install .` put into a fresh virtual environment.
"""
import filecmp
import os
import sys

import ropecheck

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
