"""The function libraries of Kubernetes' CEL environment (importing this registers every binding)."""

from schedcheck.reference.util.cel.libs import (k8s, kformat, lists, net, optional, receivers, std,  # noqa: F401
                                                strformat, strings, timestamps, url)
