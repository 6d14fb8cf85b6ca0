from ansible_collections.offline_pot.tke.plugins.module_utils import nat_redirect as n

RULE = "-A OUTPUT -d 10.0.0.100/32 -p tcp -m tcp --dport 8443 -m comment --comment tke-vip-redirect " \
       "-j REDIRECT --to-ports 6443"
OLD = "-A OUTPUT -d 10.0.0.99/32 -p tcp -m tcp --dport 8443 -m comment --comment tke-vip-redirect " \
      "-j REDIRECT --to-ports 6443"
OTHER = '-A OUTPUT -d 1.2.3.4/32 -m comment --comment "someone else" -j ACCEPT'
LISTING = "\n".join(["-P OUTPUT ACCEPT", OTHER, RULE, "-A OUTPUT -j KUBE-SERVICES"])


def test_rule_args_are_tkes_rule_with_a_comment():
    assert n.rule_args("10.0.0.100", 8443, 6443, "c") == [
        "-p", "tcp", "-d", "10.0.0.100/32", "--dport", "8443", "-m", "comment", "--comment", "c",
        "-j", "REDIRECT", "--to-ports", "6443"]


def test_ours_finds_only_our_comment():
    assert n.ours(LISTING, "tke-vip-redirect") == [RULE]
    assert n.ours(LISTING, "someone") == []
    assert n.ours(LISTING, "someone else") == [OTHER]


def test_plan_nothing_to_do_when_the_one_rule_is_there():
    assert n.plan([RULE], True, "present") == {"delete": [], "insert": False}


def test_plan_insert_when_missing():
    assert n.plan([], False, "present") == {"delete": [], "insert": True}


def test_plan_duplicates_and_stale_rules_are_replaced_by_one():
    assert n.plan([RULE, RULE], True, "present") == {"delete": [RULE, RULE], "insert": True}
    assert n.plan([OLD], False, "present") == {"delete": [OLD], "insert": True}


def test_plan_absent():
    assert n.plan([RULE], True, "absent") == {"delete": [RULE], "insert": False}
    assert n.plan([], False, "absent") == {"delete": [], "insert": False}


def test_delete_args():
    assert n.delete_args(RULE)[:3] == ["-D", "OUTPUT", "-d"]
    assert n.delete_args(OTHER)[-3:] == ["someone else", "-j", "ACCEPT"]
