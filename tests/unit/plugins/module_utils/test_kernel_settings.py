from ansible_collections.offline_pot.tke.plugins.module_utils import kernel_settings as ks


def test_sysctl_content_is_sorted_and_normalized():
    text = ks.sysctl_content({"vm.swappiness": 0, "net.ipv4.tcp_rmem": "4096\t87380  6291456", "a.b": True})
    assert text.splitlines()[1:] == ["a.b = 1", "net.ipv4.tcp_rmem = 4096 87380 6291456", "vm.swappiness = 0"]
    assert text.startswith(ks.HEADER)


def test_modules_content_keeps_order_without_duplicates():
    assert ks.modules_content(["overlay", "br_netfilter", "overlay"]).splitlines()[1:] == ["overlay", "br_netfilter"]


def test_sysctl_differs_ignores_whitespace():
    assert not ks.sysctl_differs("4096\t87380 6291456\n", "4096 87380 6291456")
    assert ks.sysctl_differs("60\n", 0)
    assert ks.sysctl_differs(None, 0)
    assert ks.proc_path("net.bridge.bridge-nf-call-iptables") == "/proc/sys/net/bridge/bridge-nf-call-iptables"


def test_fstab_swap_lines_are_commented_once():
    fstab = "UUID=1 / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n# /old none swap sw 0 0\n"
    new, commented = ks.fstab_without_swap(fstab)
    assert commented == ["/swapfile none swap sw 0 0"]
    assert new == "UUID=1 / ext4 defaults 0 1\n# /swapfile none swap sw 0 0\n# /old none swap sw 0 0\n"
    assert ks.fstab_without_swap(new) == (new, [])


def test_active_swaps_and_module_availability():
    text = "Filename Type Size Used Priority\n/swapfile file 1024 0 -2\n"
    assert ks.active_swaps(text) == ["/swapfile"]
    assert ks.active_swaps("Filename Type Size Used Priority\n") == []
    assert ks.module_available("br-netfilter", {"br_netfilter"}, set())
    assert ks.module_available("overlay", set(), {"overlay"})
    assert not ks.module_available("ip_vs", {"overlay"}, {"bridge"})
