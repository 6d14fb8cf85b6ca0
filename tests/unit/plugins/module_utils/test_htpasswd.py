import sys

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import htpasswd as h


def fake():
    return (lambda pw, hashed: hashed == "$2b$" + pw), (lambda pw: "$2b$" + pw)


def test_matching_entry_is_kept():
    check, make = fake()
    users, changed = h.desired({"admin": "$2b$pw"}, "admin", "pw", check, make)
    assert not changed and users == {"admin": "$2b$pw"}


def test_new_password_or_non_bcrypt_entry_is_replaced():
    check, make = fake()
    assert h.desired({"admin": "$2b$old"}, "admin", "new", check, make) == ({"admin": "$2b$new"}, True)
    assert h.desired({"admin": "{SHA}x"}, "admin", "x", check, make)[1]
    assert h.desired({}, "admin", "x", check, make) == ({"admin": "$2b$x"}, True)


def test_parse_render_round_trip():
    text = "b:$2b$x\na:$2y$y\n"
    assert h.render(h.parse(text)) == "a:$2y$y\nb:$2b$x\n"


def test_real_backend_round_trip():
    check, make = h.bcrypt_backend()
    hashed = make("secret")
    assert hashed.startswith("$2") and check("secret", hashed) and not check("other", hashed)


def test_without_bcrypt_the_error_names_the_package(monkeypatch):
    """No crypt() fallback (Python 3.13 has no crypt module): the host needs python3-bcrypt."""
    monkeypatch.setitem(sys.modules, "bcrypt", None)
    with pytest.raises(RuntimeError, match="install python3-bcrypt"):
        h.bcrypt_backend()
