"""A small extender for Volcano's extender plugin (Python standard library only).

    python3 examples/extender_server.py --port 8888 [--log calls.txt]

It answers POSTs on these paths, reading only fields the schedcheck reference renders
(reference_impl/plugins/extender_json.py), so upstream's scheduler and the reference get the same answers:

- /predicate: refuses a node labelled `example.extender/refuse`. The label's value picks the reply's
  code: "unschedulable" sends 2 (Unschedulable), anything else sends no code (the plugin turns that into
  Error). Reads node.Name and node.Node.metadata.labels.
- /prioritize: scores each node by its label `example.extender/score` (a number; 0 without it).
  Reads nodes[].Name and nodes[].Node.metadata.labels.
- /preemptable, /reclaimable: every evictee may go except pods labelled `example.extender/protected`;
  status 1 (Permit). Reads evictees[].UID and evictees[].Pod.metadata.labels. Tasks labelled
  `example.extender/also-evict` that an earlier /predicate request showed on a node (node.Tasks) and that
  are not among the evictees are added to the victims as they were shown (the scheduler evicts them too).
  A victim whose pod carries the annotation `example.extender/victim-patch` is returned with that JSON merge
  patch (RFC 7386) applied: `{"Resreq": {"MilliCPU": 0}}` changes a field, `{"UID": "x"}` names a task the
  scheduler does not have, `{"Resreq": null}` leaves a field out, `null` returns null in its place.
- /jobEnqueueable: rejects (-1) a job whose PodGroup carries the annotation `example.extender/hold`,
  else permits (1). Reads job.PodGroup.metadata.annotations.
- /allocateFunc: vetoes the allocation of a pod labelled `example.extender/veto` (an `errorMessage`, which
  makes the scheduler roll the allocation back). Reads task.Pod.metadata.labels.
- /broken: answers 500, for a verb that fails.
- /gzip/<path>: answers as <path> does, the body gzip-compressed (Content-Encoding: gzip) when the request
  accepts gzip, as Go's client does.
- /redirect/<code>/<path>: answers <code> (301, 302, 303, 307 or 308) with Location /<path>; Go's client
  follows it, as a GET without a body after 301-303 (the path then answers as to an empty request).
- any other path (onSessionOpen, onSessionClose, jobEnqueued, ...): 200 with `{}`.

With --log, every request's path is appended to the file, one per line; with --bodies, every request is
appended to that file as one JSON line {"path": ..., "body": the body's text} (what
examples/compare_extender_bodies.py compares between the reference and upstream).
"""

from __future__ import annotations

import argparse
import gzip
import json
from http.server import BaseHTTPRequestHandler, HTTPServer

REFUSE = "example.extender/refuse"
SCORE = "example.extender/score"
PROTECTED = "example.extender/protected"
HOLD = "example.extender/hold"
VETO = "example.extender/veto"
ALSO_EVICT = "example.extender/also-evict"
VICTIM_PATCH = "example.extender/victim-patch"
SEEN: dict[str, dict] = {}  # UID -> a task labelled ALSO_EVICT, as a /predicate request last showed it


def labels(obj: dict | None) -> dict:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def predicate(request: dict) -> dict:
    node = request.get("node") or {}
    for task in (node.get("Tasks") or {}).values():
        if task and ALSO_EVICT in labels(task.get("Pod")):
            SEEN[task.get("UID")] = task
    refusal = labels(node.get("Node")).get(REFUSE)
    if refusal is None:
        return {"status": ""}
    reply = {"status": f"node {node.get('Name')} is labelled {REFUSE}"}
    if refusal == "unschedulable":
        reply["code"] = 2
    return reply


def prioritize(request: dict) -> dict:
    scores = {}
    for node in request.get("nodes") or []:
        try:
            scores[node["Name"]] = float(labels(node.get("Node")).get(SCORE, 0))
        except ValueError:
            scores[node["Name"]] = 0.0
    return {"nodeScore": scores}


def merge_patch(target, patch):
    """RFC 7386: objects merge key by key, null removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def patched(task: dict) -> dict | None:
    annotations = ((task.get("Pod") or {}).get("metadata") or {}).get("annotations") or {}
    if VICTIM_PATCH not in annotations:
        return task
    return merge_patch(task, json.loads(annotations[VICTIM_PATCH]))


def victims(request: dict) -> dict:
    evictees = request.get("evictees") or []
    allowed = [task for task in evictees if PROTECTED not in labels(task.get("Pod"))]
    offered = {task.get("UID") for task in evictees}
    allowed += [task for uid, task in sorted(SEEN.items()) if uid not in offered]
    return {"status": 1, "victims": [patched(task) for task in allowed]}


def job_enqueueable(request: dict) -> dict:
    pod_group = (request.get("job") or {}).get("PodGroup") or {}
    held = HOLD in ((pod_group.get("metadata") or {}).get("annotations") or {})
    return {"status": -1 if held else 1}


def allocate_func(request: dict) -> dict:
    pod = (request.get("task") or {}).get("Pod")
    return {"errorMessage": f"{VETO} on the pod"} if VETO in labels(pod) else {}


HANDLERS = {"/predicate": predicate, "/prioritize": prioritize, "/preemptable": victims, "/reclaimable": victims,
            "/jobEnqueueable": job_enqueueable, "/allocateFunc": allocate_func}


class Handler(BaseHTTPRequestHandler):
    log_path: str | None = None
    bodies_path: str | None = None

    def do_POST(self) -> None:  # noqa: N802 - the http.server naming
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(f"{self.command} {self.path}\n" if self.command != "POST" else self.path + "\n")
        if self.bodies_path:
            with open(self.bodies_path, "a", encoding="utf-8") as log:
                log.write(json.dumps({"path": self.path, "body": body.decode("utf-8", "replace")}) + "\n")
        path, compress = self.path, False
        if path == "/broken":
            self.send_error(500, "broken on purpose")
            return
        if path.startswith("/redirect/"):
            code, _, rest = path[len("/redirect/"):].partition("/")
            self.send_response(int(code))
            self.send_header("Location", "/" + rest)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path.startswith("/gzip/"):
            path, compress = path[len("/gzip"):], "gzip" in self.headers.get("Accept-Encoding", "")
        handler = HANDLERS.get(path)
        reply = handler(json.loads(body or b"{}")) if handler else {}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if compress:
            data = gzip.compress(data)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST  # noqa: N815 - a redirected POST comes back as a GET

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", help="append every request's path to this file")
    parser.add_argument("--bodies", help="append every request's path and body to this file, one JSON line each")
    args = parser.parse_args()
    Handler.log_path = args.log
    Handler.bodies_path = args.bodies
    HTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
