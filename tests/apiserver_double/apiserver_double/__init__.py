"""kube-apiserver TEST DOUBLE (tests only): see ../README.md."""
