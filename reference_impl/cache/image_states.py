"""The cache's image registry (upstream cache.go `imageStates`, event_handlers.go addNodeImageStates /
removeNodeImageStates), which feeds nodeorder's ImageLocality.

Each image name maps to its size (from the first node that reported it) and the set of nodes holding it.
A node's summary, {image name: (size, number of nodes)}, is taken when the node is added or updated and
not refreshed when other nodes come later: a node added first sees fewer holders of a shared image than
one added after it, as upstream. The informer's first List hands nodes over in name order (the API
server lists by key); later the world's additions, removals and changes are replayed as node events.
"""

from __future__ import annotations

from schedcheck.reference.k8s import Node

ImageSummary = dict[str, tuple[int, int]]  # image name -> (size in bytes, nodes holding it)
NO_IMAGES: ImageSummary = {}


class ImageStates:
    def __init__(self) -> None:
        self._size: dict[str, int] = {}
        self._holders: dict[str, set[str]] = {}
        self._seen: dict[str, str] = {}  # node name -> the node as last handed to the cache
        self.summaries: dict[str, ImageSummary] = {}

    def refresh(self, nodes: list[Node]) -> None:
        """Replay the node events that turn the last seen node set into `nodes`."""
        if not self._seen and not any(node.images for node in nodes):
            return  # no image anywhere, none ever seen: nothing to keep
        first_list = not self._seen
        present = {node.name for node in nodes}
        for name in [n for n in self._seen if n not in present]:
            self._remove(name)
            del self._seen[name]
            self.summaries.pop(name, None)
        for node in sorted(nodes, key=lambda n: n.name) if first_list else nodes:
            fingerprint = repr(node)
            if self._seen.get(node.name) == fingerprint:
                continue
            if node.name in self._seen:
                self._remove(node.name)  # AddOrUpdateNode on an update
            self._seen[node.name] = fingerprint
            self.summaries[node.name] = self._add(node)

    def _add(self, node: Node) -> ImageSummary:
        summary: ImageSummary = {}
        for image in node.images:
            for name in image.names:
                holders = self._holders.get(name)
                if holders is None:
                    holders = self._holders[name] = set()
                    self._size[name] = image.size_bytes
                holders.add(node.name)
                if name not in summary:
                    summary[name] = (self._size[name], len(holders))
        return summary

    def _remove(self, node_name: str) -> None:
        for name in list(self._holders):
            holders = self._holders[name]
            holders.discard(node_name)
            if not holders:
                del self._holders[name]
                del self._size[name]
