"""`kubeadm token list|create` and the bootstrap tokens (init's bootstrap-token phase), kept in the
state file (k8s.io/cluster-bootstrap's defaults: the usages and the default node group)."""
import datetime
import json
import secrets

import cluster_api
import common
from common import Fail


DEFAULT_GROUP = "system:bootstrappers:kubeadm:default-node-token"


def parse_ttl(ttl):
    if not ttl:
        return 0
    try:
        return int(common.go_duration(ttl))
    except Fail as e:
        raise Fail(f'invalid argument "{ttl}" for "--ttl" flag: {e}') from None


def add_token(st, tok, description, ttl, usages=None, groups=None):
    secs = parse_ttl(str(ttl))
    exp = None if secs == 0 else (datetime.datetime.now(datetime.timezone.utc)
                                  + datetime.timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%SZ")
    st["tokens"][tok] = {"description": description, "expires": exp,
                         "usages": usages or ["authentication", "signing"], "groups": groups or [DEFAULT_GROUP]}


def run_token(sub, fl):
    kubeconfig = (fl.get("kubeconfig") or [f"{common.K8S}/admin.conf"])[-1]
    server, ca = cluster_api.admin_server(kubeconfig)
    if sub == "create":
        # the token's Secret is created or updated as kubeadm's writes are: polled until the API call timeout
        cluster_api.retried(lambda: cluster_api.api_get(server, "/readyz", ca), cluster_api.api_call_timeout())
    else:
        cluster_api.api_get(server, "/readyz", ca)   # list: one List call, not retried
    st = common.load_state()
    now = datetime.datetime.now(datetime.timezone.utc)
    if sub == "list":
        fmt = (fl.get("output") or ["text"])[-1]
        for tok, t in st["tokens"].items():
            if t["expires"] and datetime.datetime.fromisoformat(t["expires"].replace("Z", "+00:00")) < now:
                continue
            obj = {"kind": "BootstrapToken", "apiVersion": "output.kubeadm.k8s.io/v1alpha3", "token": tok,
                   "description": t["description"], "usages": t["usages"], "groups": t["groups"]}
            if t["expires"]:
                obj["expires"] = t["expires"]
            print(json.dumps(obj, indent=4) if fmt == "json" else f"{tok}  {t['expires'] or '<forever>'}  {t['description']}")
    elif sub == "create":
        tok = f"{secrets.token_hex(3)}.{secrets.token_hex(8)}"
        add_token(st, tok, (fl.get("description") or [""])[-1], (fl.get("ttl") or ["24h0m0s"])[-1])
        common.save_state(st)
        print(tok)
    else:
        raise Fail(f"the double does not implement 'token {sub}'")
