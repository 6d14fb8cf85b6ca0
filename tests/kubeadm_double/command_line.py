"""The command line as kubeadm's cobra reads it: flags (an unknown flag refused, klog's `_` normalized
to `-`, the release's boolean flags), the flags each (sub-)command takes, `--config` mixed with other flags
(validation.go ValidateMixedArguments/isAllowedFlag), a phase's trailing arguments (workflow/runner.go),
and which phase "kubeadm init|join phase ..." names in the release's table (CLI.INIT, CLI.JOIN)."""
from common import CLI, STACK_HINT, DataFail, Fail


ALL_FLAGS = set().union(*CLI.INIT.values(), *CLI.JOIN.values(), *CLI.TOKEN.values(), *CLI.UPGRADE.values(),
                        *CLI.RESET.values(), CLI.GLOBAL, {"help", "output"})
BOOL_FLAGS = CLI.BOOL_FLAGS | CLI.UPGRADE_BOOL


def parse(argv):
    """(path words, flags dict) with kubeadm's cobra behaviour for unknown flags."""
    words, flags, i = [], {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and a != "-":
            name, eq, val = a.lstrip("-").partition("=")
            name = name.replace("_", "-")  # utilflag.WordSepNormalizeFunc
            if a.startswith("-o") and not a.startswith("--"):
                name, val, eq = "output", a[2:] or None, bool(a[2:])
            if name == "v" and not eq and i + 1 < len(argv) and argv[i + 1].isdigit():
                val, eq, i = argv[i + 1], True, i + 1
            if name not in ALL_FLAGS:
                raise Fail(f"unknown flag: --{name}" + STACK_HINT)
            if not eq and name not in BOOL_FLAGS and name != "v":
                if i + 1 >= len(argv):
                    raise Fail(f"flag needs an argument: --{name}")
                val, i = argv[i + 1], i + 1
            flags.setdefault(name, []).append(val if (eq or name not in BOOL_FLAGS) else "true")
        else:
            words.append(a)
        i += 1
    return words, flags


def check_flags(cmd, allowed, flags):
    for name in flags:
        if name not in allowed and name not in CLI.GLOBAL and name != "help":
            raise Fail(f"unknown flag: --{name}" + STACK_HINT)
    if "config" in flags:
        mixed = sorted(n for n in flags if n not in CLI.MIX_ALLOWED and not n.startswith("skip-"))
        if mixed:
            raise DataFail(f"can not mix '--config' with arguments [{' '.join(mixed)}]" + STACK_HINT)


def check_args(command, phase, args):
    """workflow/runner.go: a leaf phase takes its command's arguments (init: none; join: at most one,
    the API server endpoint) unless it sets its own validator (cobra.NoArgs)."""
    if not args:
        return
    if command == "init" or phase in CLI.JOIN_NO_ARGS:
        raise Fail(f'unknown command "{args[0]}" for "kubeadm {command} phase {phase}"')
    if len(args) > 1:
        raise Fail(f"accepts at most 1 arg(s), received {len(args)}")


def resolve_phase(command, table, rest):
    """(phase, remaining arguments) as cobra resolves "kubeadm <command> phase ..."."""
    groups = {p.split()[0] for p in table if " " in p}
    if rest and " ".join(rest[:2]) in table:
        return " ".join(rest[:2]), rest[2:]
    if rest and rest[0] in groups:  # a phase with sub-phases takes no argument (cobra.NoArgs)
        raise Fail(f'unknown command "{rest[1]}" for "kubeadm {command} phase {rest[0]}"' if len(rest) > 1 else
                   f"the double does not run 'kubeadm {command} phase {rest[0]}' without a sub-phase")
    if rest and rest[0] in table:
        return rest[0], rest[1:]
    raise Fail(f'unknown command "{rest[0] if rest else ""}" for "kubeadm {command} phase"')
