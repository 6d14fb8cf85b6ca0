"""The strategy's scan of the ansible.module_utils a module imports (plugins/strategy/mitogen_linear.py)
finds what mitogen's own scan finds, reading each file once for the process."""
import collections
import glob
import importlib.util
import os
import py_compile

import pytest

finder = pytest.importorskip("ansible_mitogen.module_finder")

import ansible.module_utils  # noqa: E402  pylint: disable=wrong-import-position
import ansible.modules  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.offline_pot.tke.plugins.strategy import mitogen_linear  # noqa: E402  pylint: disable=wrong-import-position

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
SEARCH = (os.path.dirname(ansible.module_utils.__file__),)
# the collection's modules and the builtin ones its roles run
MODULES = sorted(glob.glob(os.path.join(COLLECTION, "plugins", "modules", "*.py"))) + [
    os.path.join(os.path.dirname(ansible.modules.__file__), f"{name}.py")
    for name in ("apt", "command", "copy", "file", "stat", "systemd_service", "uri", "wait_for")]


def test_the_collection_plugin_replaced_mitogens_scan():
    assert finder.scan.__qualname__ == "module_utils_scan.<locals>.scan"


def test_each_file_is_read_once_over_every_module():
    walked = collections.Counter()

    def counting(code, prefix):
        walked[code.co_filename] += 1
        return finder.walk_imports(code, prefix)

    scan = mitogen_linear.module_utils_scan(counting, finder.PREFIX.rstrip("."))
    needs = [scan(module_name="m", module_path=path, search_path=SEARCH) for path in MODULES]
    assert max(walked.values()) == 1
    # with what every earlier module left in the cache, each finds what mitogen's own scan finds (the
    # function its scan() calls on Python 3)
    for path, found in zip(MODULES, needs):
        assert found == finder._scan_importlib_find_spec("m", path, list(SEARCH)), path   # pylint: disable=protected-access
    assert ("ansible.module_utils.basic", os.path.join(SEARCH[0], "basic.py"), False) in needs[-1]
    # every module and every module_utils file any of them needs, each read
    assert set(walked) == set(MODULES) | {path for found in needs for dummy, path, dummy2 in found}


def test_mitogens_sender_scans_through_the_bytecode_cache():
    assert mitogen_linear.mitogen.master.compile is mitogen_linear.code_of


@pytest.mark.parametrize("path", MODULES[-3:] + [os.path.join(SEARCH[0], "basic.py")], ids=os.path.basename)
def test_code_of_a_whole_file_imports_what_its_compile_imports(path):
    with open(path, "rb") as f:
        source = f.read()
    imports = list(finder.walk_imports(compile(source, path, "exec")))
    assert list(finder.walk_imports(mitogen_linear.code_of(source, path, "exec"))) == imports
    assert list(finder.walk_imports(mitogen_linear.code_of(source.decode(), path, "exec"))) == imports


def test_code_of_takes_the_files_cache_and_writes_none(tmp_path, mocker):
    module = tmp_path / "m.py"
    module.write_text("import ansible.module_utils.basic\n")
    taken = mocker.spy(mitogen_linear._CachedCode, "get_code")   # pylint: disable=protected-access
    code = mitogen_linear.code_of(module.read_bytes(), str(module), "exec")
    assert list(finder.walk_imports(code)) == ["ansible", "ansible.module_utils", "ansible.module_utils.basic"]
    assert taken.call_count == 1 and not (tmp_path / "__pycache__").exists()
    # the cache Python's import made is taken, checked as an import checks it (the file's mtime and
    # size): an edit of the same size with the file's times put back is not seen, by an import either
    py_compile.compile(str(module), cfile=importlib.util.cache_from_source(str(module)), doraise=True)
    stat = module.stat()
    module.write_text("import ansible.module_utils.facts\n")   # the same size, its times put back
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    cached = mitogen_linear.code_of(module.read_bytes(), str(module), "exec")
    assert list(finder.walk_imports(cached))[-1] == "ansible.module_utils.basic"
    # a text the file does not hold is compiled as given, without the cache
    changed = module.read_bytes() + b"import ansible.module_utils.six\n"
    assert list(finder.walk_imports(mitogen_linear.code_of(changed, str(module), "exec")))[-1] == "ansible.module_utils.six"
    assert taken.call_count == 2
    # as mitogen.master compiles: no __future__ of the caller's (this plugin has annotations)
    assert mitogen_linear.code_of("def f(x: (y := 1)): pass", "<text>", "exec")
    assert mitogen_linear.code_of("x", str(module), "eval").co_names == ("x",)
