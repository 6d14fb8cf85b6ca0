#!/usr/bin/env bash
# Test hosts for offline_pot.tke: N Debian 12 "hosts" on this machine, each a systemd-nspawn
# container booting real systemd, with its own IP on a private bridge and sshd reachable over
# real SSH. Facts and hazards: docs/testing.md.
#
#   testhosts.sh deps              apt packages the harness itself needs (on the machine; + shellcheck for ansible-test sanity,
#                                  qemu-user-static for arm64 hosts)
#   testhosts.sh rootfs            build (cold) or reuse (warm) the cached rootfs (of TH_RELEASE)
#   testhosts.sh repo              local apt repository for the hosts (tests/harness/packages.txt)
#   testhosts.sh debs DEST PKG...  the .debs a host needs to install PKG..., fetched into DEST
#   testhosts.sh net-up | net-down private bridge + the forward guard of this instance
#   testhosts.sh up N...           start hosts hN (overlay over the rootfs)
#   testhosts.sh ssh-wait N...     wait until sshd answers on every hN
#   testhosts.sh down N...         stop hosts hN (by the PIDs this harness started)
#   testhosts.sh reset N...        stop hN, drop all it wrote, start it fresh
#   testhosts.sh destroy           down every host of this instance, net-down, remove its state
#   testhosts.sh info              print the instance's facts as shell variables
#   testhosts.sh mirror            print the Debian mirror the rootfs is built from
#
# Environment: TH_ID (instance 0-99, default 1): bridge thbr$TH_ID, subnet 172.30.$TH_ID.0/24,
# state under $TH_CACHE/run-$TH_ID. Instances never share a bridge, a subnet or a host.
# TH_RELEASE (bookworm, the default: Debian 12; or trixie: Debian 13): the Debian release of the
# rootfs and repository that `rootfs`, `repo`, `info` and `up` work on, each release its own (a
# site may mix hosts of both: `up` the hosts of each release with its TH_RELEASE). TH_ARCH (amd64,
# the default; or arm64: run through qemu-user-static, registered with binfmt_misc, docs/testing.md)
# likewise: each (release, arch) its own rootfs and repository.
# TH_CACHE (default <repo>/.cache/testhosts) holds the rootfs, the repo and the SSH key,
# shared read-only by every instance and built under a lock. TH_LAYERS (optional, `up` and
# `reset`): directories, colon-separated, stacked read-only over the rootfs of the hosts started
# (overlayfs lower layers, the first on top; tests/harness/kubeadm_double.py's layer(): the test
# doubles' files, so no host has them copied in). They must not change while a host uses them.
set -euo pipefail
# the hosts inherit it: a caller's umask 077 leaves files in them that their own services
# (systemd-networkd, as its own user) cannot read
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
TH_ID=${TH_ID:-1}
if ! [[ $TH_ID =~ ^[0-9]+$ ]] || (( TH_ID > 99 )); then echo "TH_ID must be 0-99" >&2; exit 2; fi
CACHE=${TH_CACHE:-$TOP/.cache/testhosts}
RUN=$CACHE/run-$TH_ID
BR=thbr$TH_ID
NET=172.30.$TH_ID
GW=$NET.1
TH_RELEASE=${TH_RELEASE:-bookworm}
case $TH_RELEASE in bookworm|trixie) ;; *) echo "TH_RELEASE must be bookworm or trixie" >&2; exit 2 ;; esac
TH_ARCH=${TH_ARCH:-amd64}
case $TH_ARCH in amd64|arm64) ;; *) echo "TH_ARCH must be amd64 or arm64" >&2; exit 2 ;; esac
# bookworm's amd64 keep the names they had before there were several
SUFFIX=$([ "$TH_RELEASE" = bookworm ] || echo "-$TH_RELEASE")$([ "$TH_ARCH" = amd64 ] || echo "-$TH_ARCH")
# what a host is (kept with it: a host keeps the kind it was first started as)
KIND=$TH_RELEASE$([ "$TH_ARCH" = amd64 ] || echo "/$TH_ARCH")
ROOTFS=$CACHE/rootfs$SUFFIX
KEY=$CACHE/id_ed25519
PASSFILE=$CACHE/password           # root and ops password (password-auth tests), mode 0600
# Bump when the rootfs recipe below changes: a cached tarball of another version is rebuilt.
ROOTFS_VERSION=7
PKGLIST=$HERE/packages.txt
# The repository is keyed by its package list: a changed list builds a new directory, so hosts of
# another instance that have an older one bind-mounted keep working.
REPO=$CACHE/repo$SUFFIX-$( { echo "$ROOTFS_VERSION"; sed 's/#.*//' "$PKGLIST" | tr -s ' \t' '\n' | sed '/^$/d' | sort -u; } \
  | sha256sum | cut -c1-12)
NFT_TABLE=testhostguard$TH_ID
INCLUDE=systemd,systemd-sysv,dbus,openssh-server,python3,python3-apt,iproute2,sudo,iputils-ping,ca-certificates,kmod,procps
HIER="systemd unified cpu cpuacct cpuset memory devices freezer blkio pids"

log() { printf '[testhosts %s] %s\n' "$TH_ID" "$*" >&2; }
mirror() { awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources; }
uplink() { ip -o route show default | awk '{for(i=1;i<=NF;i++) if($i=="dev"){print $(i+1); exit}}'; }
host_ip() { echo "$NET.$((10 + $1))"; }
# one build at a time per release (a release's build does not hold up the others' hosts)
locked() { mkdir -p "$CACHE"; exec 9>"$CACHE/.lock$SUFFIX"; flock 9; }

cgdir() { # per-host cgroup below this shell's own cgroup, in hierarchy $1
  local key=$1 base
  [ "$1" = systemd ] && key=name=systemd
  [ "$1" = unified ] && key=""
  base=$(awk -F: -v k="$key" '$2==k{print $3}' /proc/self/cgroup)
  echo "/sys/fs/cgroup/$1${base%/}/testhost-$TH_ID-$2"
}

build_rootfs() {
  local R=$ROOTFS.new pw
  rm -rf "$R"
  log "debootstrap $KIND (cold build, about 2 minutes; an arm64 one runs its packages' scripts emulated: about 3 minutes of CPU here)"
  debootstrap --arch "$TH_ARCH" --variant=minbase --include=$INCLUDE "$TH_RELEASE" "$R" "$(mirror)" >"$CACHE/debootstrap$SUFFIX.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap$SUFFIX.log" >&2; return 1; }
  # the SSH key and the password every release's hosts share, made by the first build
  ( flock 8
    [ -f "$KEY" ] || ssh-keygen -q -t ed25519 -N '' -C testhosts -f "$KEY"
    [ -f "$PASSFILE" ] || (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$PASSFILE") ) 8>"$CACHE/.keys.lock"
  pw=$(cat "$PASSFILE")
  install -d -m700 "$R/root/.ssh"
  install -m600 "$KEY.pub" "$R/root/.ssh/authorized_keys"
  # host keys are made per host at first boot, never shared through the cached tarball: ed25519
  # and ECDSA (`ssh-keygen -A` would add RSA 3072, 0.2-2 s of CPU per host boot; every client
  # here, OpenSSH and paramiko, takes either)
  rm -f "$R"/etc/ssh/ssh_host_*
  mkdir -p "$R/etc/systemd/system/ssh.service.d"
  # shellcheck disable=SC2016  # $t and $f belong to the script written
  printf '#!/bin/sh\nfor t in ed25519 ecdsa; do\n  f=/etc/ssh/ssh_host_${t}_key\n  [ -s "$f" ] || ssh-keygen -q -t "$t" -N "" -f "$f"\ndone\n' \
    > "$R/usr/local/sbin/testhosts-host-keys"
  chmod 755 "$R/usr/local/sbin/testhosts-host-keys"
  printf '[Service]\nExecStartPre=\nExecStartPre=/usr/local/sbin/testhosts-host-keys\nExecStartPre=/usr/sbin/sshd -t\n' \
    > "$R/etc/systemd/system/ssh.service.d/keygen.conf"
  # nspawn mounts v1 cgroup controllers read-only; nested containerd/runc needs them writable
  cat > "$R/etc/systemd/system/cgroup-rw.service" <<'EOF'
[Unit]
Description=Make v1 cgroup controllers writable (nested runc)
DefaultDependencies=no
Before=sysinit.target
ConditionVirtualization=systemd-nspawn
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'for c in cpu cpuacct cpuset memory devices freezer blkio pids; do mount -o remount,bind,rw /sys/fs/cgroup/$c; done'
[Install]
WantedBy=sysinit.target
EOF
  # one public certificate authority, not Mozilla's ~140, as on a hardened image for an air-gapped
  # site: every update of the system store (update-ca-certificates: some four programs per
  # certificate; the install adds the registry's CA on every host, the reset takes it out) handles
  # two, not ~140 (measured in a full test run: 4.4 s a call on a Debian 12 host under the suite's
  # load, 93 s on the emulated arm64 one). One stays so that the store is rebuilt as on any host when
  # the registry's CA leaves it (with none, update-ca-certificates keeps the old bundle)
  # (the links of the others go from here: --fresh would read each with a program of the chroot's,
  # under qemu-user on arm64)
  sed -i '0,/^mozilla\//!s|^mozilla/|!mozilla/|' "$R/etc/ca-certificates.conf"
  find "$R/etc/ssl/certs" -type l -delete
  chroot "$R" update-ca-certificates >/dev/null
  chroot "$R" systemctl enable -q systemd-networkd ssh cgroup-rw
  chroot "$R" systemctl mask -q systemd-timesyncd getty@tty1
  if [ "$TH_ARCH" != amd64 ]; then
    # under qemu-user (7.2, Debian 12's) systemd cannot set up a unit's credentials ("Failed to set up
    # credentials: Invalid argument") and systemd-networkd cannot open its netlink sockets ("Could
    # not setup manager: Protocol not supported"): the units that load credentials get copies without
    # them (nothing passes any to a test host), and `up` writes the host's address as ip(8) commands
    # (rtnetlink, which qemu-user does carry) in place of networkd's
    local u
    grep -l '^LoadCredential=' "$R"/lib/systemd/system/*.service | while read -r u; do
      grep -v '^LoadCredential=' "$u" > "$R/etc/systemd/system/${u##*/}"
    done
    chroot "$R" systemctl disable -q systemd-networkd
    chroot "$R" systemctl mask -q systemd-networkd systemd-networkd.socket systemd-networkd-wait-online
  fi
  # root: key or password (password-based SSH through paramiko is a supported way in);
  # ops: an unprivileged user that becomes root with sudo and its password
  # key exchange: X25519 (curve25519-sha256, in every OpenSSH and paramiko) instead of OpenSSH
  # 9's default post-quantum hybrid sntrup761x25519, whose CPU cost on both ends made each new
  # connection here 0.6-0.8 s instead of 0.2-0.3 s (measured; a scenario opens hundreds)
  printf 'PermitRootLogin yes\nPasswordAuthentication yes\nUseDNS no\nKexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org\n' \
    > "$R/etc/ssh/sshd_config.d/10-testhosts.conf"
  chroot "$R" useradd -m -s /bin/bash -G sudo ops
  install -d -m700 -o "$(chroot "$R" id -u ops)" -g "$(chroot "$R" id -g ops)" "$R/home/ops/.ssh"
  install -m600 -o "$(chroot "$R" id -u ops)" -g "$(chroot "$R" id -g ops)" "$KEY.pub" "$R/home/ops/.ssh/authorized_keys"
  printf 'root:%s\nops:%s\n' "$pw" "$pw" | chroot "$R" chpasswd
  : > "$R/etc/machine-id"
  printf '# no DNS inside test hosts\n' > "$R/etc/resolv.conf"
  # this kernel has no loadable modules: tell kmod which are built in, so modprobe of those succeeds
  local K; K=$(uname -r); mkdir -p "$R/lib/modules/$K"; : > "$R/lib/modules/$K/modules.order"
  printf 'kernel/net/bridge/bridge.ko\nkernel/net/bridge/br_netfilter.ko\nkernel/fs/overlayfs/overlay.ko\nkernel/net/netfilter/nf_conntrack.ko\nkernel/net/ipv4/netfilter/ip_tables.ko\n' \
    > "$R/lib/modules/$K/modules.builtin"
  chroot "$R" depmod -a "$K" 2>/dev/null || true
  rm -f "$R/etc/apt/sources.list"
  echo 'deb [trusted=yes] file:/srv/repo ./' > "$R/etc/apt/sources.list.d/local.list"
  chroot "$R" apt-get clean; rm -rf "$R"/var/lib/apt/lists/*
  echo "$ROOTFS_VERSION" > "$R/etc/testhosts-rootfs-version"
  tar -C "$R" --numeric-owner -cf - . | zstd -q -T0 -3 -o "$CACHE/rootfs$SUFFIX.tar.zst.new"
  mv "$CACHE/rootfs$SUFFIX.tar.zst.new" "$CACHE/rootfs$SUFFIX.tar.zst"
  rm -rf "$ROOTFS"; mv "$R" "$ROOTFS"
}

binfmt() { # another architecture's programs run through qemu-user-static, registered with the
  # kernel's binfmt_misc (flag F: the interpreter is opened now, so it works inside each host's own
  # root; Debian's package registers it only where systemd-binfmt or binfmt-support runs)
  [ "$TH_ARCH" = amd64 ] && return 0
  local q=qemu-aarch64 conf=/usr/lib/binfmt.d/qemu-aarch64.conf
  if [ ! -f "$conf" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static >/dev/null
  fi
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  [ -e /proc/sys/fs/binfmt_misc/$q ] || printf '%s' "$(cat "$conf")" > /proc/sys/fs/binfmt_misc/register
  grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/$q \
    || { log "$q is registered with binfmt_misc without flag F: hosts of $TH_ARCH cannot run"; return 1; }
}

rootfs() {
  binfmt
  locked
  if [ "$(cat "$ROOTFS/etc/testhosts-rootfs-version" 2>/dev/null)" = "$ROOTFS_VERSION" ]; then return 0; fi
  if [ -f "$CACHE/rootfs$SUFFIX.tar.zst" ] && [ -f "$KEY" ] && [ -f "$PASSFILE" ]; then
    log "extracting cached rootfs"
    rm -rf "$ROOTFS.new"; mkdir -p "$ROOTFS.new"
    zstd -dc "$CACHE/rootfs$SUFFIX.tar.zst" | tar -C "$ROOTFS.new" -x
    if [ "$(cat "$ROOTFS.new/etc/testhosts-rootfs-version" 2>/dev/null)" = "$ROOTFS_VERSION" ]; then
      rm -rf "$ROOTFS"; mv "$ROOTFS.new" "$ROOTFS"; return 0
    fi
    log "cached rootfs is of another recipe version: rebuilding"
  fi
  build_rootfs
}

fetch_debs() { # DEST PKG...: the packages and what they need beyond the rootfs, fetched by the
  # release's apt on its rootfs (an overlay, dropped after) from the machine's mirror
  local dest=$1 T M rc=0; shift
  T=$CACHE/apt$SUFFIX-tmp; rm -rf "$T"; mkdir -p "$T"/{upper,work,merged} "$dest"; M=$T/merged
  mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$T/upper,workdir=$T/work" "$M"
  rm -f "$M/etc/apt/sources.list.d/local.list" "$M/etc/apt/sources.list"
  # the machine's mirror (and snapshot notes), for the rootfs's release
  sed "s/\bbookworm\b/$TH_RELEASE/g" /etc/apt/sources.list.d/debian.sources > "$M/etc/apt/sources.list.d/debian.sources"
  if [ "$TH_ARCH" = amd64 ]; then
    mount --bind /etc/resolv.conf "$M/etc/resolv.conf"
    chroot "$M" apt-get update -qq && chroot "$M" apt-get install -y -qq --no-install-recommends --download-only "$@" >/dev/null || rc=$?
    umount "$M/etc/resolv.conf"
  else
    # another architecture's apt would run emulated (about 15 s of CPU a call, its update parsing
    # the archive's indexes under qemu-user): this machine's apt (Debian 12's) runs on the rootfs
    # instead, as the rootfs's architecture, with only the rootfs's settings (APT_CONFIG is read
    # before apt.conf.d, which Dir then puts in the rootfs), sources, keyring and dpkg status
    sed -Ei "s#^([Ss]igned-[Bb]y:[[:space:]]*)/#\\1$M/#" "$M/etc/apt/sources.list.d/debian.sources"
    printf 'Dir "%s/";\nAPT::Architecture "%s";\nAPT::Architectures { "%s"; };\nAPT::Sandbox::User "root";\n' \
      "$M" "$TH_ARCH" "$TH_ARCH" > "$T/apt.conf"
    APT_CONFIG=$T/apt.conf apt-get update -qq \
      && APT_CONFIG=$T/apt.conf apt-get install -y -qq --no-install-recommends --download-only "$@" >/dev/null || rc=$?
  fi
  cp "$M"/var/cache/apt/archives/*.deb "$dest/" 2>/dev/null || true
  umount "$M"; rm -rf "$T"
  [ $rc = 0 ] || log "apt download failed ($rc)"
  return $rc
}

repo() { # debs resolved against the rootfs, fetched by apt on it (fetch_debs), indexed for apt
  locked
  mapfile -t pkgs < <(sed 's/#.*//' "$PKGLIST" | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
  [ -f "$REPO/Release" ] && return 0
  log "building the hosts' apt repository (${#pkgs[@]} packages) in $REPO"
  rm -rf "$REPO.new"
  fetch_debs "$REPO.new" "${pkgs[@]}" || return
  (cd "$REPO.new" && apt-ftparchive packages . > Packages 2>/dev/null && apt-ftparchive release . > Release)
  mv "$REPO.new" "$REPO"
}

debs() { # DEST PKG...: what a host of this release needs to install PKG... (tests/harness/fixture_pack.py)
  locked
  fetch_debs "$@"
}

net_up() {
  local up; up=$(uplink)
  # converge, not just create: a bridge left behind (down, without its address) is repaired
  ip link show "$BR" >/dev/null 2>&1 || ip link add "$BR" type bridge
  ip addr replace "$GW/24" dev "$BR"; ip link set "$BR" up
  # nothing from the test net is ever forwarded anywhere: hosts reach only each other and this machine
  nft list table inet "$NFT_TABLE" >/dev/null 2>&1 || nft -f - <<EOF
table inet $NFT_TABLE {
  chain guardfwd {
    type filter hook forward priority -300; policy accept;
    iifname "$BR" oifname != "$BR" drop
    oifname "$BR" iifname != "$BR" drop
    ${up:+oifname "$up" ip saddr $NET.0/24 drop}
  }
}
EOF
}

net_down() {
  ip link del "$BR" 2>/dev/null || true
  nft delete table inet "$NFT_TABLE" 2>/dev/null || true
}

write_hosts_file() { # /etc/hosts of a host: every possible test host of this instance
  local f=$1 i
  { echo "127.0.0.1 localhost"; echo "$GW controller"
    for i in $(seq 1 20); do echo "$(host_ip "$i") h$i"; done; } > "$f"
}

# Every host's systemd takes inotify instances from the machine's one per-user budget (all hosts
# run as root): Debian's 128 runs out at about 5 hosts ("Too many open files" at boot). Raised, never
# lowered, for the parallel test workers' 10+ hosts.
inotify_room() {
  local want=2048 have
  have=$(cat /proc/sys/fs/inotify/max_user_instances)
  [ "$have" -ge "$want" ] || sysctl -q -w fs.inotify.max_user_instances=$want
  have=$(cat /proc/sys/fs/inotify/max_user_watches)
  [ "$have" -ge 524288 ] || sysctl -q -w fs.inotify.max_user_watches=524288
}

up() {
  local n h d ip c g
  inotify_room
  binfmt
  for n in "$@"; do
    h=h$n; d=$RUN/hosts/$h; ip=$(host_ip "$n")
    if [ -f "$d/pid" ] && kill -0 "$(cat "$d/pid")" 2>/dev/null; then log "$h already up"; continue; fi
    # a host keeps the release it was first started with (its upper layer is that rootfs's)
    if [ -f "$d/release" ] && [ "$(cat "$d/release")" != "$KIND" ]; then
      log "$h was started as $(cat "$d/release"), not $KIND: destroy the instance first"; return 1
    fi
    mkdir -p "$d"/{upper,work,merged,containerd}
    echo "$KIND" > "$d/release"
    mountpoint -q "$d/merged" || mount -t overlay overlay \
      -o "lowerdir=${TH_LAYERS:+$TH_LAYERS:}$ROOTFS,upperdir=$d/upper,workdir=$d/work" "$d/merged"
    mkdir -p "$d/merged/etc/systemd/network"
    printf '[Match]\nName=host0\n[Network]\nAddress=%s/24\nGateway=%s\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n' "$ip" "$GW" \
      > "$d/merged/etc/systemd/network/10-host0.network"
    if [ "$TH_ARCH" != amd64 ]; then   # (no networkd under qemu-user: build_rootfs)
      printf '[Unit]\nDescription=Test host address (in place of systemd-networkd)\nDefaultDependencies=no\nBefore=network.target ssh.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/sbin/ip link set host0 up\nExecStart=/sbin/ip addr replace %s/24 dev host0\nExecStart=/sbin/ip route replace default via %s\n[Install]\nWantedBy=multi-user.target\n' "$ip" "$GW" \
        > "$d/merged/etc/systemd/system/testhost-address.service"
      mkdir -p "$d/merged/etc/systemd/system/multi-user.target.wants"
      ln -sf ../testhost-address.service "$d/merged/etc/systemd/system/multi-user.target.wants/testhost-address.service"
      # nor a unit's own network namespace (PrivateNetwork=): e2scrub_reap's would fail every boot
      ln -sf /dev/null "$d/merged/etc/systemd/system/e2scrub_reap.service"
    fi
    echo "$h" > "$d/merged/etc/hostname"
    # each host its own machine id, the same after a reset (a host wiped and rebuilt under the same
    # name keeps it, as a VM restored from its image does): derived from the instance and the name
    [ -s "$d/merged/etc/machine-id" ] || printf '%s' "th$TH_ID-$h" | md5sum | cut -c1-32 > "$d/merged/etc/machine-id"
    write_hosts_file "$d/merged/etc/hosts"
    # the host side of its veth pair, if a guest killed on `down` left it (a process still held
    # the guest's network namespace): nspawn would fail "Failed to add new veth interfaces: File
    # exists" and the host would never answer
    ip link del "vb-th$TH_ID-$h" 2>/dev/null || true
    : > "$d/cgroups"
    for c in $HIER; do
      g=$(cgdir "$c" "$h"); mkdir -p "$g"; echo "$g" >> "$d/cgroups"
      if [ "$c" = cpuset ]; then cat "$(dirname "$g")/cpuset.cpus" > "$g/cpuset.cpus"; cat "$(dirname "$g")/cpuset.mems" > "$g/cpuset.mems"; fi
    done
    # own cgroups per host (else all guests share one and systemd inside cannot kill units);
    # the loop restarts the container on exit code 133, which is how nspawn reports a guest reboot
    # shellcheck disable=SC2016  # $$, $g, $@ and $rc belong to the inner sh
    setsid sh -c 'for g in $(cat '"$d"'/cgroups); do echo $$ > $g/cgroup.procs; done
       while :; do "$@"; rc=$?; [ $rc = 133 ] || exit $rc; done' nspawn \
      systemd-nspawn --boot --register=no --keep-unit -M "th$TH_ID-$h" --hostname="$h" -D "$d/merged" \
        --network-bridge="$BR" --bind-ro="$REPO:/srv/repo" --bind="$d/containerd:/var/lib/containerd" \
        --console=read-only --resolv-conf=off --timezone=off \
        --capability=all --drop-capability=CAP_SYS_TIME \
        --system-call-filter='@mount @module @raw-io @reboot @cpu-emulation @obsolete @privileged @keyring' \
        --system-call-filter='~@swap' \
        >"$d/console.log" 2>&1 </dev/null &
    echo $! > "$d/pid"
  done
}

ssh_wait() {
  local n ip
  for n in "$@"; do
    ip=$(host_ip "$n")
    for _ in $(seq 600); do
      ssh -q -i "$KEY" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=1 \
        -o BatchMode=yes "root@$ip" true 2>/dev/null && continue 2
      sleep 0.2
    done
    log "h$n ($ip) did not answer on SSH; console:"; tail -20 "$RUN/hosts/h$n/console.log" >&2 || true
    return 1
  done
}

down() {
  local n d w c i g
  for n in "$@"; do
    d=$RUN/hosts/h$n; [ -d "$d" ] || continue
    w=$(cat "$d/pid" 2>/dev/null || true)
    if [ -n "$w" ] && kill -0 "$w" 2>/dev/null; then
      # the launcher loop is ours (its PID file); stop it first so it does not restart nspawn
      c=$(pgrep -P "$w" -x systemd-nspawn || true)
      for g in $c; do kill -STOP "$w" 2>/dev/null || true; kill "$g" 2>/dev/null || true; done
      kill -CONT "$w" 2>/dev/null || true
      for i in $(seq 150); do kill -0 "$w" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$w" 2>/dev/null || true
      # a guest whose shutdown hangs (a unit's stop job waiting out its 90 s) is killed, every
      # process of the host's cgroups (killing nspawn alone leaves the guest running): nspawn still
      # running would hold the machine's directory, and the next `up` of the host would fail
      # ("Directory tree ... is currently busy") and leave it down
      for g in $c; do
        kill -0 "$g" 2>/dev/null || continue
        for i in 1 2 3; do
          # shellcheck disable=SC2046  # one PID a word
          kill -9 $(find $(cat "$d/cgroups") -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u) 2>/dev/null || true
          sleep 0.5
        done
        for i in $(seq 100); do kill -0 "$g" 2>/dev/null || break; sleep 0.1; done
      done
    fi
    mountpoint -q "$d/merged" && umount "$d/merged" 2>/dev/null || umount -l "$d/merged" 2>/dev/null || true
    if [ -f "$d/cgroups" ]; then
      while read -r g; do
        if [ -d "$g" ]; then find "$g" -depth -type d -exec rmdir {} \; 2>/dev/null || true; fi
      done < "$d/cgroups"
    fi
    rm -f "$d/pid"
  done
}

reset() { # a fresh host: stop it, drop everything it wrote, start it again
  local n d
  for n in "$@"; do
    d=$RUN/hosts/h$n
    down "$n"; rm -rf "$d/upper" "$d/work" "$d/containerd"
  done
  up "$@"; ssh_wait "$@"
}

destroy() {
  local d
  for d in "$RUN"/hosts/h*; do [ -d "$d" ] && down "${d##*/h}"; done
  net_down
  rm -rf "$RUN"
}

info() {
  printf 'TH_ID=%s\nTH_BRIDGE=%s\nTH_NET=%s\nTH_GW=%s\nTH_KEY=%s\nTH_PASSFILE=%s\nTH_RUN=%s\nTH_REPO=%s\n' \
    "$TH_ID" "$BR" "$NET" "$GW" "$KEY" "$PASSFILE" "$RUN" "$REPO"
}

cmd=${1:-}; shift || true
case $cmd in
  deps)
    command -v debootstrap >/dev/null && command -v systemd-nspawn >/dev/null && command -v nft >/dev/null \
      && command -v apt-ftparchive >/dev/null && command -v zstd >/dev/null && command -v ssh >/dev/null \
      && command -v shellcheck >/dev/null && command -v qemu-aarch64-static >/dev/null && exit 0
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap systemd-container nftables apt-utils zstd openssh-client \
      shellcheck qemu-user-static >/dev/null ;;
  rootfs) rootfs ;;
  repo) repo ;;
  debs) debs "$@" ;;
  net-up) net_up ;;
  net-down) net_down ;;
  up) up "$@" ;;
  ssh-wait) ssh_wait "$@" ;;
  down) down "$@" ;;
  reset) reset "$@" ;;
  destroy) destroy ;;
  info) info ;;
  mirror) mirror ;;
  *) sed -n '2,/^set /{/^set /d;p}' "$0"; exit 2 ;;
esac
