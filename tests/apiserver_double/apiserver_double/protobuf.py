"""Request bodies in Kubernetes' protobuf encoding (`Content-Type: application/vnd.kubernetes.protobuf`),
for the kinds a real client sends that way: helm's release storage writes its Secrets (or
ConfigMaps) through client-go's typed clientset, which speaks protobuf to the server.

Sources: staging/src/k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go (the 4-byte
magic `k8s\\x00`, then a runtime.Unknown: 1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3
contentEncoding, 4 contentType); staging/src/k8s.io/api/core/v1/generated.proto (Secret: 1
metadata, 2 data map<string,bytes>, 3 type, 4 stringData, 5 immutable; ConfigMap: 1 metadata, 2 data,
3 binaryData, 4 immutable); apimachinery/pkg/apis/meta/v1/generated.proto (ObjectMeta: 1 name, 2
generateName, 3 namespace, 5 uid, 6 resourceVersion, 7 generation, 11 labels, 12 annotations, 14
finalizers). The protobuf wire format: protobuf.dev/programming-guides/encoding. Responses are
JSON (the clients accept it: `Accept: application/vnd.kubernetes.protobuf,application/json`).
"""
from __future__ import annotations

import base64

MAGIC = b"k8s\x00"


class Unsupported(ValueError):
    pass


def _varint(b, i):
    n = shift = 0
    while True:
        if i >= len(b):
            raise Unsupported("truncated varint")
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, i


def fields(b: bytes):
    """(field number, wire type, value) of a message: ints for varints, bytes for length-delimited."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise Unsupported(f"wire type {wt}")
        yield num, wt, v


def _map(entry: bytes, value_bytes=False):
    k = v = b""
    for num, dummy, val in fields(entry):
        if num == 1:
            k = val
        elif num == 2:
            v = val
    return k.decode(), (v if value_bytes else v.decode())


def object_meta(b: bytes) -> dict:
    m, labels, ann, fin = {}, {}, {}, []
    names = {1: "name", 2: "generateName", 3: "namespace", 5: "uid", 6: "resourceVersion"}
    for num, dummy, v in fields(b):
        if num in names:
            m[names[num]] = v.decode()
        elif num == 7:
            m["generation"] = v
        elif num == 11:
            k, val = _map(v)
            labels[k] = val
        elif num == 12:
            k, val = _map(v)
            ann[k] = val
        elif num == 14:
            fin.append(v.decode())
    if labels:
        m["labels"] = labels
    if ann:
        m["annotations"] = ann
    if fin:
        m["finalizers"] = fin
    return m


def _secret(raw):
    o = {"apiVersion": "v1", "kind": "Secret", "metadata": {}}
    for num, dummy, v in fields(raw):
        if num == 1:
            o["metadata"] = object_meta(v)
        elif num == 2:
            k, val = _map(v, value_bytes=True)
            o.setdefault("data", {})[k] = base64.b64encode(val).decode()
        elif num == 3:
            o["type"] = v.decode()
        elif num == 4:
            k, val = _map(v)
            o.setdefault("stringData", {})[k] = val
        elif num == 5:
            o["immutable"] = bool(v)
    return o


def _configmap(raw):
    o = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}
    for num, dummy, v in fields(raw):
        if num == 1:
            o["metadata"] = object_meta(v)
        elif num == 2:
            k, val = _map(v)
            o.setdefault("data", {})[k] = val
        elif num == 3:
            k, val = _map(v, value_bytes=True)
            o.setdefault("binaryData", {})[k] = base64.b64encode(val).decode()
        elif num == 4:
            o["immutable"] = bool(v)
    return o


KINDS = {("v1", "Secret"): _secret, ("v1", "ConfigMap"): _configmap}


def decode(body: bytes) -> dict:
    if not body.startswith(MAGIC):
        raise Unsupported("no k8s protobuf magic")
    api_version = kind = ""
    raw = b""
    for num, dummy, v in fields(body[len(MAGIC):]):
        if num == 1:
            for n2, d2, v2 in fields(v):
                if n2 == 1:
                    api_version = v2.decode()
                elif n2 == 2:
                    kind = v2.decode()
        elif num == 2:
            raw = v
    fn = KINDS.get((api_version, kind))
    if fn is None:
        raise Unsupported(f"{kind} {api_version} in protobuf")
    return fn(raw)
